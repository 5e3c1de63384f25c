/*
 * dnsdamper/srvrand.h: random sources for srv_iter_init and srv_order
 * (dnsdamper/srv.h): a seeded, reproducible one and the system's.
 */
#ifndef DNSDAMPER_SRVRAND_H
#define DNSDAMPER_SRVRAND_H

#include <stdint.h>

#include <dnsdamper/srv.h>

#ifdef __cplusplus
extern "C" {
#endif

/* State of the seeded source; set by srvrand_seeded. */
struct srvrand_seeded {
	uint64_t	state;
};

/*
 * srvrand_seeded: make *out a deterministic source seeded with seed, with
 * its state in *s (which must outlive *out). It is SplitMix64 (Steele,
 * Lea and Flood, "Fast splittable pseudorandom number generators", 2014):
 * state += 0x9e3779b97f4a7c15, and the value is the state mixed by
 *   z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
 *   z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
 *   z ^ (z >> 31).
 * The same seed gives the same sequence on every platform; different
 * seeds give independent sequences. Not for secrets.
 */
void	srvrand_seeded(struct srvrand_seeded *s, uint64_t seed,
	    struct srv_random *out);

/*
 * srvrand_system: make *out the system's cryptographic source
 * (arc4random_buf(3) where the C library has it, else getrandom(2)).
 * Needs no state. A getrandom failure other than EINTR aborts, as
 * arc4random does: there is no value to return.
 */
void	srvrand_system(struct srv_random *out);

#ifdef __cplusplus
}
#endif

#endif
