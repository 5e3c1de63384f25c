/*
 * fuzz_cachefile.c: libFuzzer target of the cache file reader: the input
 * is a cache file but for its checksum, which is appended (an input
 * otherwise stops at the checksum: FNV-1a is no secret, so a hostile file
 * has the right one). cachefile_read loads it into an empty cache with
 * the query path's forward zones; what it stored is dumped as GET /cache
 * does, written out as at a stop, and read back, which must succeed.
 */
#include "autoconf.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "cachedump.h"
#include "cachefile.h"
#include "fnv.h"
#include "fuzzworld.h"
#include "wire.h"

int	LLVMFuzzerInitialize(int *argc, char ***argv);
int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NOW	1000000000ULL	/* monotonic ms */
#define INPUT_MAX	(1 << 20)

/* The world all inputs share, made once: libFuzzer's entry points have
 * no argument to pass it in. */
static struct fuzzworld world;
static char in_path[128], out_path[128];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzzworld_init(&world, FUZZWORLD_CONF);
	fuzzworld_path(&world, "in.cache", in_path, sizeof(in_path));
	fuzzworld_path(&world, "out.cache", out_path, sizeof(out_path));
	return 0;
}

/* Every entry of the cache in the dump's text, and thrown away. */
static void
dump(void)
{
	struct evbuffer *b;
	unsigned i;

	ck_assert_ptr_nonnull(b = evbuffer_new());
	for (i = 0; i < cache_slices(world.ctx.cache); i++)
		(void)cachedump_slice(world.ctx.cache, i, NOW, b);
	evbuffer_free(b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *file;
	uint64_t sum;
	long n;

	if (size > INPUT_MAX)
		return 0;
	ck_assert_ptr_nonnull(file = malloc(size + 8));
	memcpy(file, data, size);
	sum = fnv1a64(FNV1A64_INIT, data, size);
	wire_wr32(file + size, (uint32_t)(sum >> 32));
	wire_wr32(file + size + 4, (uint32_t)sum);
	fuzzworld_write(in_path, file, size + 8);
	free(file);
	fuzzworld_begin(&world, NOW);
	if (cachefile_read(world.ctx.cache, world.ctx.zones, in_path,
	    NOW) > 0) {
		dump();
		n = cachefile_write(world.ctx.cache, world.ctx.zones,
		    out_path, NOW);
		ck_assert(n >= 0);
		fuzzworld_empty_cache(&world);
		ck_assert(cachefile_read(world.ctx.cache, world.ctx.zones,
		    out_path, NOW) >= 0);
	}
	(void)fuzzworld_end(&world);
	fuzzworld_empty_cache(&world);
	return 0;
}
