/* check_main.h: the main() every unit test program shares. */
#ifndef DNSDAMPER_CHECK_MAIN_H
#define DNSDAMPER_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

/* Run suite s; exit status 0 when every test passed, 1 otherwise. */
static inline int
check_main_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
