/* An input file that may be gzipped, read once, front to back, in pieces.
 *
 * Why a stream: a PyTorch profile of 10^7 events is a few GB of JSON (26 MB
 * gzipped). Inflated whole, then parsed, it took 3.7 GB; read through this
 * stream the profile reader holds one event at a time (core/profile.c).
 * And a pipe or FIFO has no second reading: the gzip magic is taken from
 * the first bytes read, not by opening the file again (a process
 * substitution lost its first 4 KB to that, a FIFO hung).
 *
 * gzip (RFC 1952) allows several members back to back; each is inflated to
 * its end and its CRC. Bytes after the last member that begin no other
 * are an error, as is a stream cut short: zlib's gzread takes both
 * silently, which turned a trace whose last block was cut off into a
 * shorter, wrong one (issue 64). */
#include "core_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

enum { ZIN_CHUNK = 1 << 18 };

struct wl_core_zin {
    const char *path;
    FILE *f;
    int gzip;          /* the first two bytes were gzip's magic */
    int in_eof;        /* the file has no more bytes */
    int done;          /* the last member ended (or the plain file did) */
    int failed;        /* an error was told; every later read fails */
    z_stream z;
    int z_live;        /* inflateInit2 succeeded: inflateEnd is owed */
    unsigned char in[ZIN_CHUNK];
    size_t in_at, in_n; /* the unread input: in[in_at, in_n) */
    unsigned long long out_total;
    unsigned long long limit;
};

/* More input at in[in_at, in_n) (what was left moved to the front): 1, 0
 * at the end of the file, -1 a read error (told). */
static int fill(wl_core_zin *z, wl_error *err)
{
    if (z->in_eof)
        return 0;
    size_t left = z->in_n - z->in_at;
    memmove(z->in, z->in + z->in_at, left);
    z->in_at = 0;
    z->in_n = left;
    size_t got = fread(z->in + left, 1, sizeof z->in - left, z->f);
    z->in_n += got;
    if (got == 0) {
        if (ferror(z->f)) {
            wl_error_set(err, z->path, 0, "", "read error: %s", strerror(errno));
            return -1;
        }
        z->in_eof = 1;
        return 0;
    }
    return 1;
}

int wl_core_zin_open(const char *path, unsigned long long limit, wl_core_zin **out, wl_error *err)
{
    *out = NULL;
    wl_core_zin *z = calloc(1, sizeof *z);
    if (!z) {
        wl_error_set(err, path, 0, "", "out of memory");
        return WL_ENOMEM;
    }
    z->path = path;
    z->limit = limit;
    int rc = WL_OK;
    if (!(z->f = fopen(path, "rb"))) {
        wl_error_set(err, path, 0, "", "cannot open: %s", strerror(errno));
        rc = WL_EIO;
    }
    struct stat st;
    if (!rc && fstat(fileno(z->f), &st) == 0 && S_ISDIR(st.st_mode)) {
        wl_error_set(err, path, 0, "", "is a directory, not a file");
        rc = WL_EIO;
    }
    /* the magic: the first two bytes (a pipe may give one at a time) */
    while (!rc && z->in_n < 2) {
        int r = fill(z, err);
        if (r < 0)
            rc = WL_EIO;
        if (r <= 0)
            break;
    }
    if (!rc && z->in_n >= 2 && z->in[0] == 0x1f && z->in[1] == 0x8b) {
        z->gzip = 1;
        if (inflateInit2(&z->z, 15 + 16) != Z_OK) { /* gzip only */
            wl_error_set(err, path, 0, "", "out of memory");
            rc = WL_ENOMEM;
        } else {
            z->z_live = 1;
        }
    }
    if (rc) {
        wl_core_zin_close(z);
        return rc;
    }
    *out = z;
    return WL_OK;
}

/* Inflates into buf: the bytes, or -1 (told). */
static long inflate_some(wl_core_zin *z, char *buf, size_t n, wl_error *err)
{
    size_t got = 0;
    while (got == 0 && !z->done) {
        if (z->in_at == z->in_n) {
            int r = fill(z, err);
            if (r < 0)
                return -1;
        }
        size_t avail = z->in_n - z->in_at;
        if (avail == 0) { /* the file ended inside a member */
            wl_error_set(err, z->path, 0, "", "a gzip file cut short (its stream does not end "
                                              "before the file does)");
            return -1;
        }
        z->z.next_in = z->in + z->in_at;
        z->z.avail_in = (unsigned)avail;
        size_t room = n - got > (1u << 30) ? (1u << 30) : n - got;
        z->z.next_out = (unsigned char *)buf + got;
        z->z.avail_out = (unsigned)room;
        int r = inflate(&z->z, Z_NO_FLUSH);
        z->in_at += avail - z->z.avail_in;
        got += room - z->z.avail_out;
        if (r == Z_STREAM_END) {
            /* another member follows, or bytes that are none, or the end */
            while (z->in_n - z->in_at < 2) {
                int f = fill(z, err);
                if (f < 0)
                    return -1;
                if (f == 0)
                    break;
            }
            size_t left = z->in_n - z->in_at;
            if (left == 0) {
                z->done = 1;
            } else if (left >= 2 && z->in[z->in_at] == 0x1f && z->in[z->in_at + 1] == 0x8b) {
                inflateReset(&z->z);
            } else {
                /* how many: the rest of the file, counted */
                unsigned long long tail = left;
                z->in_at = z->in_n;
                while (fill(z, err) > 0) {
                    tail += z->in_n;
                    z->in_at = z->in_n;
                }
                wl_error_set(err, z->path, 0, "", "%llu bytes after the gzip stream's end", tail);
                return -1;
            }
        } else if (r != Z_OK && r != Z_BUF_ERROR) {
            wl_error_set(err, z->path, 0, "", "not a readable gzip file: %s",
                         z->z.msg ? z->z.msg : "corrupt data");
            return -1;
        }
    }
    return (long)got;
}

long wl_core_zin_read(wl_core_zin *z, char *buf, size_t n, wl_error *err)
{
    if (z->failed)
        return -1;
    if (n > (1u << 30))
        n = 1u << 30;
    long got;
    if (z->gzip) {
        got = inflate_some(z, buf, n, err);
    } else if (z->in_at < z->in_n) { /* what the magic check read */
        size_t k = z->in_n - z->in_at < n ? z->in_n - z->in_at : n;
        memcpy(buf, z->in + z->in_at, k);
        z->in_at += k;
        got = (long)k;
    } else if (z->in_eof) {
        got = 0;
    } else {
        size_t k = fread(buf, 1, n, z->f);
        if (k == 0 && ferror(z->f)) {
            wl_error_set(err, z->path, 0, "", "read error: %s", strerror(errno));
            got = -1;
        } else {
            z->in_eof = k == 0;
            got = (long)k;
        }
    }
    if (got > 0) {
        z->out_total += (unsigned long long)got;
        /* a gzip bomb, or a device that never ends (/dev/zero) */
        if (z->out_total > z->limit) {
            wl_error_set(err, z->path, 0, "", "larger than %llu MiB%s", z->limit >> 20,
                         z->gzip ? " uncompressed" : "");
            got = -1;
        }
    }
    if (got < 0)
        z->failed = 1;
    return got;
}

void wl_core_zin_close(wl_core_zin *z)
{
    if (!z)
        return;
    if (z->z_live)
        inflateEnd(&z->z);
    if (z->f)
        fclose(z->f);
    free(z);
}
