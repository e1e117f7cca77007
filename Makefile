# make demo : install what is needed, then fit SGFS on the Pima data and print the summary
# make vignettes : rerun the precomputed vignettes on ../shared/datasets (minutes)
# make test : install what is needed, R CMD build + check --as-cran, then the whole test suite
# make test-fast : install everything the tests use, then their fast tier (under a minute)
R ?= R
RSCRIPT ?= Rscript

.PHONY: deps deps-demo install demo check test test-fast bench vignettes

# every dependency of the checks, the tests and the vignettes
deps: deps-demo
	RSCRIPT=$(RSCRIPT) bash tools/install-system-deps.sh
	$(RSCRIPT) tools/install-deps.R

# what the package itself and the demo need (Imports, MASS)
deps-demo:
	$(RSCRIPT) tools/install-deps.R --demo

# (the C files compiled on as many cores as the machine has)
install: deps-demo
	MAKEFLAGS=-j$$(nproc 2>/dev/null || echo 1) $(R) CMD INSTALL --preclean --no-test-load . >/dev/null

demo: install
	$(RSCRIPT) tools/demo.R

check: deps
	bash tools/check.sh

test: check install
	$(RSCRIPT) tools/run-tests.R

test-fast: deps install
	$(RSCRIPT) tools/run-tests.R --fast

bench: deps install
	$(RSCRIPT) bench/bench_speed.R

vignettes: deps install
	$(RSCRIPT) tools/precompute-vignettes.R
