/* nbody_energy.c — a small star cluster under gravity, and how well its energy holds.
 *
 *   nbody_energy [BODIES] [STEPS]        (512 bodies, 1000 steps by default)
 *
 * Units with G = 1 and a total mass of 1. Leapfrog integration conserves energy to a small
 * error that oscillates rather than grows: a drift that keeps growing means dt is too
 * large for the closest encounters (the softening length bounds how close they get).
 */
#include <math.h>
#include <parprim.h>
#include <stdio.h>
#include <stdlib.h>

static float uniform(float lo, float hi) { return lo + (hi - lo) * (float)rand() / (float)RAND_MAX; }

int main(int argc, char **argv) {
  const size_t n = argc > 1 ? (size_t)atol(argv[1]) : 512;
  const size_t steps = argc > 2 ? (size_t)atol(argv[2]) : 1000, chunks = 10;
  const float dt = 1e-3f, softening = 0.05f;
  float *f = malloc(7 * n * sizeof *f);
  if (n == 0 || !f) return 2;
  pp_bodies b = {f, f + n, f + 2 * n, f + 3 * n, f + 4 * n, f + 5 * n, f + 6 * n, n};
  srand(1);
  for (size_t i = 0; i < n; i++) { /* uniform in the unit ball, slowly and randomly moving */
    do {
      b.x[i] = uniform(-1, 1), b.y[i] = uniform(-1, 1), b.z[i] = uniform(-1, 1);
    } while (b.x[i] * b.x[i] + b.y[i] * b.y[i] + b.z[i] * b.z[i] > 1);
    b.vx[i] = uniform(-0.3f, 0.3f), b.vy[i] = uniform(-0.3f, 0.3f), b.vz[i] = uniform(-0.3f, 0.3f);
    b.mass[i] = 1.0f / (float)n;
  }

  pp_context *ctx;
  if (pp_create(&ctx, PP_BACKEND_AUTO) != PP_OK) {
    fprintf(stderr, "pp_create: %s\n", pp_last_error(NULL));
    return 1;
  }
  double kin, pot, e0 = 0, worst = 0;
  printf("%zu bodies, dt %g, softening %g, on the %s backend\n", n, dt, softening,
         pp_backend_string(pp_backend_of(ctx)));
  printf("%8s %12s %12s %12s\n", "step", "kinetic", "potential", "drift");
  for (size_t c = 0; c <= chunks; c++) {
    pp_status s = c == 0 ? PP_OK : pp_nbody_step(ctx, &b, dt, softening, steps / chunks);
    if (s == PP_OK) s = pp_nbody_energy(ctx, &b, softening, &kin, &pot);
    if (s != PP_OK) {
      fprintf(stderr, "%s\n", pp_last_error(ctx));
      return 1;
    }
    if (c == 0) e0 = kin + pot;
    double drift = fabs((kin + pot - e0) / e0);
    worst = drift > worst ? drift : worst;
    printf("%8zu %12.6f %12.6f %12.2e\n", c * (steps / chunks), kin, pot, drift);
  }
  pp_destroy(ctx);
  free(f);
  printf("largest relative energy drift: %.2e\n", worst);
  return worst < 1e-3 ? 0 : 1;
}
