/* dnstapio.c: dnstap's Frame Streams output, libfstrm's I/O thread. */
#include "autoconf.h"

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fstrm.h>

#include "dnstapio.h"
#include "log.h"

/* The content type of dnstap payloads in a Frame Streams stream. */
#define DNSTAPIO_CONTENT_TYPE	"protobuf:dnstap.Dnstap"

/*
 * How long a write to (or a handshake read from) the collector may take:
 * past it the connection is closed and connected again later, so that a
 * collector that stopped reading holds up neither the I/O thread for
 * long nor the reload or stop that waits for it.
 */
#define DNSTAPIO_IO_TIMEOUT_S	1

/* How long a new file output waits for the previous one of the same
 * path to close it before it opens the file anyway. */
#define DNSTAPIO_FILE_WAIT_S	5

/*
 * An output. libfstrm's own writers drop messages silently while they
 * are not connected (its I/O thread frees them unwritten); ours say
 * whether they are (live), so that the free callback, which the I/O
 * thread calls after each message is written or thrown away, can count
 * what was thrown away. live, fd and the file list are the I/O thread's
 * (and, after it has stopped, dnstapio_free's).
 */
struct dnstapio {
	struct fstrm_iothr	 *iothr;
	struct fstrm_iothr_queue **queues;	/* one per worker */
	unsigned		  n_queues;
	char			 *path;
	int			  file;		/* a file, not a socket */
	int			  fd;		/* -1: closed */
	int			  live;		/* atomic: fd open and usable,
						 * or not tried yet (written by
						 * the I/O thread only) */
	int			  said_down;	/* a failure to open logged,
						 * not yet a success */
	struct dnstapio		 *next_file;	/* in open_files */
};

static uint64_t dropped;	/* atomic: every output's */

/*
 * The file outputs that have their file open, so that a new output of
 * the same path (a reload) opens it after the old one closed it: the
 * two would otherwise write one file at two offsets.
 */
static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t files_cond = PTHREAD_COND_INITIALIZER;
static struct dnstapio *open_files;

static void
count_drop(void)
{
	(void)__atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
}

uint64_t
dnstapio_dropped(void)
{
	return __atomic_load_n(&dropped, __ATOMIC_RELAXED);
}

static int
file_in_use(const struct dnstapio *io)
{
	const struct dnstapio *o;

	for (o = open_files; o != NULL; o = o->next_file)
		if (o != io && strcmp(o->path, io->path) == 0)
			return 1;
	return 0;
}

/* Wait (in the I/O thread) until no other output has io's file open,
 * or DNSTAPIO_FILE_WAIT_S; then io has it. */
static void
file_claim(struct dnstapio *io)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += DNSTAPIO_FILE_WAIT_S;
	pthread_mutex_lock(&files_lock);
	while (file_in_use(io) && pthread_cond_timedwait(&files_cond,
	    &files_lock, &until) == 0)
		;
	io->next_file = open_files;
	open_files = io;
	pthread_mutex_unlock(&files_lock);
}

static void
file_release(struct dnstapio *io)
{
	struct dnstapio **p;

	pthread_mutex_lock(&files_lock);
	for (p = &open_files; *p != NULL; p = &(*p)->next_file)
		if (*p == io) {
			*p = io->next_file;
			break;
		}
	pthread_cond_broadcast(&files_cond);
	pthread_mutex_unlock(&files_lock);
}

static void
sink_shut(struct dnstapio *io)
{
	if (io->fd == -1)
		return;
	close(io->fd);
	io->fd = -1;
	__atomic_store_n(&io->live, 0, __ATOMIC_RELAXED);
	if (io->file)
		file_release(io);
}

static int
socket_open(struct dnstapio *io)
{
	struct timeval tv = { DNSTAPIO_IO_TIMEOUT_S, 0 };
	struct sockaddr_un sun;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, io->path, strlen(io->path));
	if ((io->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (setsockopt(io->fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
	    sizeof(tv)) == -1 ||
	    setsockopt(io->fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
	    sizeof(tv)) == -1 ||
	    connect(io->fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		close(io->fd);
		io->fd = -1;
		return -1;
	}
	return 0;
}

/* Said once per outage: the I/O thread tries again every second. */
static fstrm_res
open_failed(struct dnstapio *io)
{
	__atomic_store_n(&io->live, 0, __ATOMIC_RELAXED);
	if (!io->said_down)
		log_warn("dnstap %s%s: cannot %s; messages are dropped (and "
		    "counted) until it can", io->file ? DNSTAPIO_FILE_PREFIX :
		    "", io->path, io->file ? "open the file" :
		    "connect to the collector");
	io->said_down = 1;
	return fstrm_res_failure;
}

static fstrm_res
sink_open(void *obj)
{
	struct dnstapio *io = obj;

	/* A handshake that failed left it open. */
	sink_shut(io);
	if (io->file) {
		file_claim(io);
		if ((io->fd = open(io->path, O_WRONLY | O_CREAT | O_TRUNC |
		    O_CLOEXEC, 0640)) == -1) {
			file_release(io);
			return open_failed(io);
		}
	} else if (socket_open(io) == -1)
		return open_failed(io);
	if (io->said_down)
		log_info("dnstap %s%s: writing again", io->file ?
		    DNSTAPIO_FILE_PREFIX : "", io->path);
	io->said_down = 0;
	__atomic_store_n(&io->live, 1, __ATOMIC_RELAXED);
	return fstrm_res_success;
}

static fstrm_res
sink_close(void *obj)
{
	sink_shut(obj);
	return fstrm_res_success;
}

static fstrm_res
sink_destroy(void *obj)
{
	(void)obj;	/* io is dnstapio_free's to free */
	return fstrm_res_success;
}

/* Any failure closes at once: what the I/O thread throws away after it
 * is then counted. */
static fstrm_res
sink_read(void *obj, void *data, size_t count)
{
	struct dnstapio *io = obj;
	uint8_t *p = data;
	ssize_t n;

	while (count > 0 && io->fd != -1) {
		if ((n = read(io->fd, p, count)) <= 0) {
			if (n == -1 && errno == EINTR)
				continue;
			break;
		}
		p += n;
		count -= (size_t)n;
	}
	if (count == 0)
		return fstrm_res_success;
	sink_shut(io);
	return fstrm_res_failure;
}

static fstrm_res
sink_write(void *obj, const struct iovec *iov, int iovcnt)
{
	struct dnstapio *io = obj;
	struct iovec v[IOV_MAX];
	struct msghdr mh;
	ssize_t n;
	size_t k;
	int i = 0;

	if (iovcnt > IOV_MAX || io->fd == -1)
		goto fail;
	memcpy(v, iov, (size_t)iovcnt * sizeof(*v));
	while (i < iovcnt) {
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = &v[i];
		mh.msg_iovlen = (size_t)(iovcnt - i);
		n = io->file ? writev(io->fd, &v[i], iovcnt - i) :
		    sendmsg(io->fd, &mh, MSG_NOSIGNAL);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		/* Past what went out; a partial iovec goes on from its rest. */
		for (k = (size_t)n; i < iovcnt && k >= v[i].iov_len; i++)
			k -= v[i].iov_len;
		if (i < iovcnt) {
			v[i].iov_base = (uint8_t *)v[i].iov_base + k;
			v[i].iov_len -= k;
		}
	}
	return fstrm_res_success;
fail:
	sink_shut(io);
	return fstrm_res_failure;
}

/* The I/O thread is done with buf: written, or thrown away. */
static void
sent_free(void *buf, void *arg)
{
	struct dnstapio *io = arg;

	if (!__atomic_load_n(&io->live, __ATOMIC_RELAXED))
		count_drop();
	free(buf);
}

static struct fstrm_writer *
writer_new(struct dnstapio *io)
{
	struct fstrm_writer_options *wopt;
	struct fstrm_writer *w;
	struct fstrm_rdwr *rdwr;

	if ((rdwr = fstrm_rdwr_init(io)) == NULL)
		return NULL;
	fstrm_rdwr_set_open(rdwr, sink_open);
	fstrm_rdwr_set_close(rdwr, sink_close);
	fstrm_rdwr_set_destroy(rdwr, sink_destroy);
	fstrm_rdwr_set_write(rdwr, sink_write);
	/* A socket's collector answers: the bidirectional handshake. */
	if (!io->file)
		fstrm_rdwr_set_read(rdwr, sink_read);
	if ((wopt = fstrm_writer_options_init()) == NULL) {
		fstrm_rdwr_destroy(&rdwr);
		return NULL;
	}
	fstrm_writer_options_add_content_type(wopt, DNSTAPIO_CONTENT_TYPE,
	    strlen(DNSTAPIO_CONTENT_TYPE));
	w = fstrm_writer_init(wopt, &rdwr);
	fstrm_writer_options_destroy(&wopt);
	if (w == NULL)
		fstrm_rdwr_destroy(&rdwr);
	return w;
}

static struct fstrm_iothr *
iothr_new(struct dnstapio *io, struct fstrm_writer **w)
{
	struct fstrm_iothr_options *opt;
	struct fstrm_iothr *iothr;

	if ((opt = fstrm_iothr_options_init()) == NULL)
		return NULL;
	fstrm_iothr_options_set_num_input_queues(opt, io->n_queues);
	fstrm_iothr_options_set_input_queue_size(opt, DNSTAPIO_QUEUE_SIZE);
	/*
	 * Each queue has one producer, its worker; the model with a mutex
	 * (taken by that worker and the I/O thread only) rather than the
	 * lock-free one, whose barriers ThreadSanitizer cannot see in the
	 * uninstrumented library.
	 */
	fstrm_iothr_options_set_queue_model(opt,
	    FSTRM_IOTHR_QUEUE_MODEL_MPSC);
	fstrm_iothr_options_set_reopen_interval(opt, 1);
	iothr = fstrm_iothr_init(opt, w);
	fstrm_iothr_options_destroy(&opt);
	return iothr;
}

struct dnstapio *
dnstapio_new(const char *target, unsigned n_queues)
{
	struct fstrm_writer *w = NULL;
	struct dnstapio *io;
	unsigned i;

	if ((io = calloc(1, sizeof(*io))) == NULL)
		return NULL;
	io->fd = -1;
	/* Until a first open fails: what is queued before it succeeds
	 * goes out. */
	io->live = 1;
	io->n_queues = n_queues > 0 ? n_queues : 1;
	io->file = strncmp(target, DNSTAPIO_FILE_PREFIX,
	    strlen(DNSTAPIO_FILE_PREFIX)) == 0;
	if ((io->path = strdup(target + (io->file ?
	    strlen(DNSTAPIO_FILE_PREFIX) : 0))) == NULL ||
	    (io->queues = calloc(io->n_queues, sizeof(*io->queues))) == NULL ||
	    (w = writer_new(io)) == NULL ||
	    (io->iothr = iothr_new(io, &w)) == NULL)
		goto fail;
	for (i = 0; i < io->n_queues; i++)
		if ((io->queues[i] = fstrm_iothr_get_input_queue_idx(io->iothr,
		    i)) == NULL)
			goto fail;
	return io;
fail:
	if (w != NULL)
		fstrm_writer_destroy(&w);
	dnstapio_free(io);
	errno = ENOMEM;
	return NULL;
}

int
dnstapio_live(const struct dnstapio *io)
{
	return __atomic_load_n(&io->live, __ATOMIC_RELAXED);
}

void
dnstapio_drop(void)
{
	count_drop();
}

int
dnstapio_submit(struct dnstapio *io, unsigned queue, void *buf, size_t len)
{
	if (fstrm_iothr_submit(io->iothr, io->queues[queue], buf, len,
	    sent_free, io) == fstrm_res_success)
		return 0;
	free(buf);
	count_drop();
	return -1;
}

void
dnstapio_free(struct dnstapio *io)
{
	if (io == NULL)
		return;
	if (io->iothr != NULL)
		fstrm_iothr_destroy(&io->iothr);
	sink_shut(io);
	free(io->queues);
	free(io->path);
	free(io);
}
