/*
 * schedule.c - step-size schedules eps_t, t = 1, 2, ... (ALGORITHMS.md 0).
 *
 *   constant:   eps_t = a
 *   polynomial: eps_t = a (b + t)^(-delta)   (Welling and Teh 2011; Ahn et
 *               al. 2012), delta in (0.5, 1] for SGLD's convergence theory.
 */
#include "sgfs.h"

double sgfs_stepsize(const sgfs_schedule *s, double t)
{
    if (s->type == 1) return s->a * pow(s->b + t, -s->delta);
    return s->a;
}
