# make demo : install what is needed, then fit SGFS on the Pima data and print the summary
# make vignettes : rerun the precomputed vignettes on ../shared/datasets (minutes)
# make test : install what is needed, R CMD build + check --as-cran, then the whole test suite
# make test-fast : install, then the fast tier of the tests (under a minute)
R ?= R
RSCRIPT ?= Rscript

.PHONY: deps install demo check test test-fast bench vignettes

deps:
	RSCRIPT=$(RSCRIPT) bash tools/install-system-deps.sh
	$(RSCRIPT) tools/install-deps.R

install: deps
	$(R) CMD INSTALL --preclean --no-test-load . >/dev/null

demo: install
	$(RSCRIPT) tools/demo.R

check: deps
	bash tools/check.sh

test: check install
	$(RSCRIPT) tools/run-tests.R

test-fast: install
	$(RSCRIPT) tools/run-tests.R --fast

bench: install
	$(RSCRIPT) bench/bench_speed.R

vignettes: install
	$(RSCRIPT) tools/precompute-vignettes.R
