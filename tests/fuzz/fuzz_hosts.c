/*
 * fuzz_hosts.c: libFuzzer target of the hosts file reader: the input is
 * a whole hosts file, read by hosts_read as the daemon reads
 * /etc/hosts. Every line it passes on must hold what hosts.h promises
 * (an address, 1 to 64 names of labels of 1 to 63 printable octets but
 * "\", 255 octets at most as a wire name), the messages about broken
 * lines are bounded, and the local zones built from the file (as at
 * start-up, localbuild_table) must answer A or AAAA for every name of
 * every valid line.
 */
#include "autoconf.h"

#include <sys/socket.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzzworld.h"
#include "hosts.h"
#include "localbuild.h"
#include "localzone.h"
#include "msg.h"
#include "parse.h"

int	LLVMFuzzerInitialize(int *argc, char ***argv);
int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Inputs past this are skipped: a file of a megabyte says no more. */
#define INPUT_MAX	(1 << 20)
/* Names of valid lines looked up in the table, at most. */
#define LOOKUPS_MAX	4096

/* Where the input is written, and the configuration naming it; made once:
 * libFuzzer's entry points have no argument to pass them in. */
static struct fuzzworld dir;
static char hosts_path[128];
static struct config conf;

/* A name to look up after the table is built: folded wire form. */
struct lookup {
	uint8_t		 name[MSG_NAME_MAX];
	size_t		 len;
	uint16_t	 type;
};

struct reading {
	int		 last_line;
	unsigned	 warnings;
	struct lookup	*lookups;
	size_t		 n, cap;
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *const *d;
	char conf_path[128], *text = NULL;
	size_t len = 0;
	FILE *errs, *fp;

	(void)argc;
	(void)argv;
	fuzzworld_init(&dir, "hosts-file none\n");
	fuzzworld_path(&dir, "hosts", hosts_path, sizeof(hosts_path));
	fuzzworld_path(&dir, "hosts.conf", conf_path, sizeof(conf_path));
	/* Without the default zones (RFC 6303's hundred) each build takes
	 * milliseconds under the sanitizers, and none reads the file. */
	ck_assert_ptr_nonnull(fp = open_memstream(&text, &len));
	fprintf(fp, "hosts-file %s\n", hosts_path);
	for (d = config_default_local_zones; *d != NULL; d++)
		fprintf(fp, "local-zone \"%s\" nodefault\n", *d);
	ck_assert_int_eq(fclose(fp), 0);
	fuzzworld_write(conf_path, (const uint8_t *)text, len);
	free(text);
	fuzzworld_write(hosts_path, NULL, 0);
	ck_assert_ptr_nonnull(errs = fopen("/dev/null", "w"));
	ck_assert_int_eq(parse_load(conf_path, &conf, errs), 0);
	fclose(errs);
	ck_assert_int_eq(conf.n_hosts_files, 1);
	return 0;
}

/*
 * The wire form of a name hosts.h promises (labels without escapes),
 * folded to lower case, checking the promise on the way: written here
 * independently of localbuild.c's.
 */
static size_t
wire_of(const char *name, uint8_t *out)
{
	size_t n = 0, label = 0, at = 0;
	const char *p;

	ck_assert_msg(*name != '\0', "an empty name");
	for (p = name; *p != '\0'; p++) {
		if (*p == '.') {
			ck_assert_msg(label > 0, "an empty label in %s", name);
			out[at] = (uint8_t)label;
			label = 0;
			continue;
		}
		ck_assert_msg(*p >= '!' && *p <= '~' && *p != '\\',
		    "octet %d in %s", *p, name);
		if (label++ == 0)
			at = n++;
		ck_assert_msg(label <= 63, "a label over 63 octets in %s",
		    name);
		ck_assert_msg(n < MSG_NAME_MAX, "over 255 octets: %s", name);
		out[n++] = (uint8_t)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
	}
	if (label > 0)
		out[at] = (uint8_t)label;
	ck_assert_msg(n + 1 <= MSG_NAME_MAX, "over 255 octets: %s", name);
	out[n++] = 0;
	return n;
}

static void
on_line(void *arg, const struct hosts_line *l)
{
	struct reading *r = arg;
	struct lookup *lk;
	size_t i;

	ck_assert(strcmp(l->file, hosts_path) == 0);
	ck_assert_msg(l->line > r->last_line, "line %d after %d", l->line,
	    r->last_line);
	r->last_line = l->line;
	ck_assert(l->family == AF_INET || l->family == AF_INET6);
	ck_assert(l->n_names >= 1 && l->n_names <= HOSTS_MAX_NAMES);
	for (i = 0; i < l->n_names; i++) {
		ck_assert_ptr_nonnull(l->names[i]);
		if (r->n == LOOKUPS_MAX) {
			uint8_t scratch[MSG_NAME_MAX];

			(void)wire_of(l->names[i], scratch);
			continue;
		}
		if (r->n == r->cap) {
			r->cap = r->cap * 2 + 16;
			ck_assert_ptr_nonnull(r->lookups = reallocarray(
			    r->lookups, r->cap, sizeof(*r->lookups)));
		}
		lk = &r->lookups[r->n++];
		lk->len = wire_of(l->names[i], lk->name);
		lk->type = l->family == AF_INET ? MSG_TYPE_A : MSG_TYPE_AAAA;
	}
}

static void
on_warn(void *arg, const char *msg)
{
	struct reading *r = arg;

	ck_assert(strncmp(msg, hosts_path, strlen(hosts_path)) == 0);
	/* the first HOSTS_WARN_MAX, then "K more" */
	ck_assert_msg(++r->warnings <= HOSTS_WARN_MAX + 1,
	    "%u messages about one file", r->warnings);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reading r = { 0, 0, NULL, 0, 0 };
	const struct localzone_node *node;
	struct localzone_table *t;
	struct hosts_stamp stamp;
	long n;
	size_t i;

	if (size > INPUT_MAX)
		return 0;
	fuzzworld_write(hosts_path, data, size);
	n = hosts_read(hosts_path, &stamp, on_line, on_warn, &r);
	ck_assert_msg(n >= 0, "a file written could not be read");
	ck_assert_int_eq(stamp.err, 0);
	ck_assert(stamp.size == (off_t)size);
	/* The daemon's table of the same file. */
	ck_assert_ptr_nonnull(t = localbuild_table(&conf));
	for (i = 0; i < r.n; i++) {
		node = localzone_find(t, r.lookups[i].name, r.lookups[i].len);
		ck_assert_msg(node != NULL &&
		    localzone_node_type(node, r.lookups[i].type) != NULL,
		    "name %zu of the valid lines not in the table", i);
	}
	ck_assert(!localzone_table_changed(t));
	localzone_table_unref(t);
	free(r.lookups);
	return 0;
}
