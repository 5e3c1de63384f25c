/*
 * fuzz_config.c: libFuzzer target of the configuration parser: the input
 * is a whole dnsdamper.conf, read by parse_load as `dnsdamper -t` reads
 * it. One that parses is printed back (printconf, as `-t -v` prints it),
 * which must parse again and print the same, and its forward zones and
 * local zones are built as at start-up.
 *
 * Includes are off: an input naming include, hosts-file or resolv-conf is
 * skipped, so that no input makes the parser read another file than
 * itself (the default /etc/hosts and /etc/resolv.conf excepted).
 */
#include "autoconf.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzzworld.h"
#include "localbuild.h"
#include "localzone.h"
#include "parse.h"
#include "printconf.h"
#include "upstream.h"
#include "zone.h"

int	LLVMFuzzerInitialize(int *argc, char ***argv);
int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Where inputs are written, and where errors go; made once: libFuzzer's
 * entry points have no argument to pass them in. */
static struct fuzzworld dir;
static char conf_path[128], printed_path[128];
static FILE *errs;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzzworld_init(&dir, "hosts-file none\n");
	fuzzworld_path(&dir, "fuzz.conf", conf_path, sizeof(conf_path));
	fuzzworld_path(&dir, "printed.conf", printed_path,
	    sizeof(printed_path));
	ck_assert_ptr_nonnull(errs = fopen("/dev/null", "w"));
	return 0;
}

/* conf printed by printconf_write, in a malloc'd string (*len octets). */
static char *
printed(const struct config *conf, size_t *len)
{
	char *text = NULL;
	FILE *fp;

	ck_assert_ptr_nonnull(fp = open_memstream(&text, len));
	printconf_write(conf, fp);
	ck_assert_int_eq(fclose(fp), 0);
	return text;
}

/* The zones and local zones of conf, made and freed. */
static void
build(const struct config *conf)
{
	struct upstream_registry *reg;
	struct localzone_table *local;
	struct zone_table *zones;

	ck_assert_ptr_nonnull(reg = upstream_registry_new(
	    conf->upstream_timeout_min, conf->upstream_timeout_max));
	if ((zones = zone_table_new(reg, conf)) != NULL)
		zone_table_unref(zones);
	if ((local = localbuild_table(conf)) != NULL)
		localzone_table_unref(local);
	upstream_registry_free(reg);
}

static int
names(const uint8_t *data, size_t size, const char *word)
{
	return memmem(data, size, word, strlen(word)) != NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config conf, again;
	char *first, *second;
	size_t n1, n2;

	if (names(data, size, "include") || names(data, size, "hosts-file") ||
	    names(data, size, "resolv-conf"))
		return 0;
	fuzzworld_write(conf_path, data, size);
	if (parse_load(conf_path, &conf, errs) == -1)
		return 0;
	first = printed(&conf, &n1);
	build(&conf);
	config_free(&conf);
	/* What -t -v prints is a configuration that means the same. */
	fuzzworld_write(printed_path, (const uint8_t *)first, n1);
	ck_assert_msg(parse_load(printed_path, &again, stderr) == 0,
	    "printed configuration does not parse:\n%s", first);
	second = printed(&again, &n2);
	ck_assert_msg(n1 == n2 && memcmp(first, second, n1) == 0,
	    "printed twice differently:\n%s\n---\n%s", first, second);
	config_free(&again);
	free(first);
	free(second);
	return 0;
}
