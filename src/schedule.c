/*
 * schedule.c - step-size schedules eps_t, t = 1, 2, ... (algorithms vignette 0).
 *
 *   constant:   eps_t = a
 *   polynomial: eps_t = a (b + t)^(-delta)   (Welling and Teh 2011; Ahn et
 *               al. 2012), delta in (0.5, 1] for SGLD's convergence theory.
 *   cyclical:   eps_t = (a / 2) [cos(pi mod(t - 1, b) / b) + 1]   (Zhang et
 *               al. 2020, algorithms vignette 2.11): cycles of b iterations, each
 *               falling from a to nearly 0.
 *   step:       eps_t = a delta^floor((t - 1) / b): multiplied by delta every
 *               b iterations (the pSGLD code's halving every 20 epochs).
 */
#include "sgfs.h"

double sgfs_stepsize(const sgfs_schedule *s, double t)
{
    if (s->type == 1) return s->a * pow(s->b + t, -s->delta);
    if (s->type == 2) return 0.5 * s->a * (cos(M_PI * fmod(t - 1.0, s->b) / s->b) + 1.0);
    if (s->type == 3) return s->a * pow(s->delta, floor((t - 1.0) / s->b));
    return s->a;
}
