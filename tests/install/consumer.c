/* consumer.c: a client built against the installed libdnsdamper-srv. */
#include <stdio.h>

#include <dnsdamper/srv.h>
#include <dnsdamper/srvrand.h>
#include <dnsdamper/srvresolve.h>

int
main(void)
{
	/* RFC 2782: priority 10 before 20, whatever the weights */
	struct srv_rr rrs[] = {
		{ 20, 65535, 8081, "backup.example." },
		{ 10, 1, 8080, "primary.example." },
	};
	struct srvrand_seeded s;
	struct srv_random rnd;
	struct srvresolve_result res = { 0 };

	srvrand_seeded(&s, 1, &rnd);
	srv_order(rrs, 2, &rnd);
	srvresolve_free(&res);
	if (rrs[0].priority != 10 || srv_unavailable(rrs, 2)) {
		fprintf(stderr, "consumer: wrong order\n");
		return 1;
	}
	printf("consumer: %s then %s\n", rrs[0].target, rrs[1].target);
	return 0;
}
