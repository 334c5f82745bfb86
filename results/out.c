/* Output files: written to a temporary file beside the target and
 * renamed into place (a failed or interrupted run leaves the old file),
 * the regular file a symlink names too (the link stays); devices and
 * FIFOs written in place; a read-only target refused; the temporary files
 * of a run killed by a signal removed. */
#define _GNU_SOURCE /* fopencookie: the errno of a failed write outlives the buffer */
#include "wattlas_results.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- output files --------------------------------------------------------------- */

enum { OUT_STDOUT, OUT_IN_PLACE, OUT_ATOMIC, OUT_HELD };

struct wl_results_out {
    FILE *f;
    int mode;
    char *path, *tmp;
    char *dest;    /* where the temporary is renamed: path, or the regular
                      file a symlink names (NULL: path) */
    int lock_fd;   /* that file, locked while it is written (-1: none) */
    int fd;        /* under f */
    int write_err; /* errno of the first failed write, 0 if none */
    char *held;    /* OUT_HELD: stdout's text until commit */
    size_t held_len;
};

/* stdio keeps only an error flag when a buffered write fails, and drops the
 * buffer, so a full disk would read "Input/output error" at commit. Writing
 * through this cookie keeps the first errno (ENOSPC, EFBIG, EDQUOT). */
static ssize_t out_cookie_write(void *c, const char *buf, size_t n)
{
    wl_results_out *o = c;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(o->fd, buf + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (!o->write_err)
                o->write_err = w < 0 ? errno : ENOSPC;
            return done ? (ssize_t)done : -1;
        }
        done += (size_t)w;
    }
    return (ssize_t)done;
}

static int out_cookie_close(void *c)
{
    wl_results_out *o = c;
    int rc = close(o->fd);
    if (rc != 0 && !o->write_err)
        o->write_err = errno;
    o->fd = -1;
    return rc;
}

/* Wraps an open descriptor in a stream that records write errors. */
static FILE *out_stream(wl_results_out *o, int fd)
{
    o->fd = fd;
    cookie_io_functions_t io = {.write = out_cookie_write, .close = out_cookie_close};
    return fopencookie(o, "w", io);
}

/* The temporary files of the outputs open now, which a signal's handler
 * removes: a run stopped by Ctrl-C, SIGTERM (a job's time limit) or
 * SIGHUP leaves no FILE.tmp.PID.N beside its output. The thread that opens
 * and closes outputs sets and clears the slots; the handler only reads
 * them, and unlink is async-signal-safe. A name is listed from before its
 * file is created until after it is renamed or removed: unlinking a name
 * that is not there does nothing. */
#define PENDING 16
static char *volatile pending[PENDING];

static void pending_set(char *from, char *to)
{
    for (int i = 0; i < PENDING; i++)
        if (pending[i] == from) {
            pending[i] = to;
            return;
        }
}

static void on_fatal_signal(int sig)
{
    for (int i = 0; i < PENDING; i++) {
        char *p = pending[i];
        if (p)
            unlink(p);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

void wl_results_out_cleanup_on_signals(void)
{
    static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    for (int i = 0; i < 3; i++) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        /* a signal ignored when we started (nohup's SIGHUP) stays ignored */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
            sigaction(sigs[i], &sa, NULL);
    }
}

static void out_free(wl_results_out *o)
{
    if (o->tmp)
        pending_set(o->tmp, NULL);
    if (o->lock_fd >= 0)
        close(o->lock_fd); /* its lock goes with it */
    free(o->path);
    free(o->tmp);
    free(o->dest);
    free(o->held);
    free(o);
}

/* A dead run's temporary folder (report's): its files, then itself; a
 * folder with anything but regular files in it is not ours, and stays. */
static void remove_stale_dir(const char *dir)
{
    DIR *d = opendir(dir);
    int clean = d != NULL;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *full = wl_core_strprintf("%s/%s", dir, e->d_name);
        struct stat st;
        if (full && lstat(full, &st) == 0 && S_ISREG(st.st_mode))
            unlink(full);
        else
            clean = 0;
        free(full);
    }
    if (d)
        closedir(d);
    if (clean)
        rmdir(dir);
}

/* The temporaries a run killed by SIGKILL (or a crash) left beside base:
 * "BASE.tmp.PID.N" regular files, and report's folders of them, whose PID
 * no process holds any more are removed on the next run into the same
 * place, so they do not pile up (issue 77: report's 9.9 MB folder stayed);
 * a live process's, and anything else, are left alone. */
void wl_results_remove_stale(const char *base)
{
    const char *sl = strrchr(base, '/');
    char *dir = sl ? wl_core_strprintf("%.*s", sl == base ? 1 : (int)(sl - base), base)
                   : wl_core_strprintf(".");
    const char *name = sl ? sl + 1 : base;
    size_t nl = strlen(name);
    DIR *d = dir ? opendir(dir) : NULL;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        const char *q = e->d_name;
        if (strncmp(q, name, nl) || strncmp(q + nl, ".tmp.", 5))
            continue;
        char *end;
        errno = 0;
        long pid = strtol(q + nl + 5, &end, 10);
        if (errno || pid <= 0 || *end != '.' || !end[1] || strspn(end + 1, "0123456789") !=
                                                             strlen(end + 1))
            continue;
        if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* its process lives (or may: not ours to judge) */
        char *full = wl_core_strprintf("%s/%s", dir, q);
        struct stat st;
        if (full && lstat(full, &st) == 0 && S_ISREG(st.st_mode))
            unlink(full);
        else if (full && S_ISDIR(st.st_mode))
            remove_stale_dir(full);
        free(full);
    }
    if (d)
        closedir(d);
    free(dir);
}

int wl_results_out_open(const char *path, wl_results_out **out, wl_error *err)
{
    *out = NULL;
    wl_results_out *o = calloc(1, sizeof *o);
    if (!o)
        return WL_ENOMEM;
    o->lock_fd = -1;
    if (strcmp(path, "-") == 0) {
        o->f = stdout;
        o->mode = OUT_STDOUT;
        *out = o;
        return WL_OK;
    }
    if (!path[0]) {
        free(o);
        wl_error_set(err, "<output>", 0, "", "empty output path");
        return WL_EINVAL;
    }
    o->path = strdup(path);
    if (!o->path) {
        free(o);
        return WL_ENOMEM;
    }
    struct stat st, tgt;
    int exists = lstat(path, &st) == 0;
    if (exists && (S_ISDIR(st.st_mode) ||
                   (S_ISLNK(st.st_mode) && stat(path, &tgt) == 0 && S_ISDIR(tgt.st_mode)))) {
        wl_error_set(err, path, 0, "", "is a directory");
        out_free(o);
        return WL_EIO;
    }
    /* A file without write permission is the user's way of keeping it:
     * renaming over it (all the directory needs) would go past that, even
     * for root, whom access() lets write anything; so is a file without
     * any write bit. */
    if (exists && stat(path, &tgt) == 0 && S_ISREG(tgt.st_mode) &&
        (access(path, W_OK) != 0 || (tgt.st_mode & 0222) == 0)) {
        wl_error_set(err, path, 0, "", "is read-only (mode %04o): not replaced; make it "
                     "writable (chmod u+w) or write elsewhere", (unsigned)(tgt.st_mode & 07777));
        out_free(o);
        return WL_EIO;
    }
    /* A symlink to a regular file: the file it names is written as any
     * regular file is, through a temporary beside it renamed over it, so
     * a run that fails leaves it whole (truncated at open, it kept a failed
     * run's partial rows) and the link stays a link. Where no temporary
     * can be made beside it (its directory is not writable), in place. */
    const char *base = path;
    if (exists && S_ISLNK(st.st_mode) && stat(path, &tgt) == 0 && S_ISREG(tgt.st_mode)) {
        char *real = realpath(path, NULL);
        char *dir = real ? wl_core_strprintf("%s", real) : NULL;
        char *sl = dir ? strrchr(dir, '/') : NULL;
        if (sl)
            *(sl == dir ? sl + 1 : sl) = 0;
        if (real && dir && access(dir, W_OK | X_OK) == 0) {
            /* locked while written, as in place: a second writer fails
             * instead of replacing it under the first */
            o->lock_fd = open(real, O_RDONLY | O_CLOEXEC);
            if (o->lock_fd >= 0 && flock(o->lock_fd, LOCK_EX | LOCK_NB) != 0) {
                wl_error_set(err, path, 0, "", "is being written by another process (it holds "
                             "the file's lock); not written");
                free(real);
                free(dir);
                out_free(o);
                return WL_EIO;
            }
            o->dest = real;
            base = real;
            st = tgt; /* its mode, not the link's */
        } else {
            free(real);
        }
        free(dir);
    }
    if (exists && !S_ISREG(st.st_mode)) {
        /* a device, FIFO or symlink: write into it, never replace it. A
         * regular file behind a symlink is locked while it is written, so
         * that a second writer fails instead of tearing its rows into the
         * first's; it is emptied only once locked. */
        int fd = open(path, O_WRONLY | O_CLOEXEC), locked = 0;
        if (fd >= 0 && fstat(fd, &tgt) == 0 && S_ISREG(tgt.st_mode)) {
            if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
                wl_error_set(err, path, 0, "", "is being written by another process (it holds "
                             "the file's lock); not written");
                close(fd);
                out_free(o);
                return WL_EIO;
            }
            locked = ftruncate(fd, 0) == 0;
            if (!locked) {
                int e = errno;
                close(fd);
                fd = -1;
                errno = e;
            }
        }
        if (fd < 0 || !(o->f = out_stream(o, fd))) {
            wl_error_set(err, path, 0, "", "cannot open output: %s", strerror(errno));
            if (fd >= 0)
                close(fd);
            out_free(o);
            return WL_EIO;
        }
        o->mode = OUT_IN_PLACE;
        *out = o;
        return WL_OK;
    }
    wl_results_remove_stale(base);
    size_t tl = strlen(base) + 64;
    o->tmp = calloc(1, tl); /* zeroed: the handler may read it mid-write */
    if (!o->tmp) {
        out_free(o);
        return WL_ENOMEM;
    }
    mode_t mode = exists ? (st.st_mode & 07777) : 0666;
    int fd = -1;
    o->tmp[0] = 0;
    pending_set(NULL, o->tmp); /* with 16 open at once, the 17th goes unlisted */
    for (int k = 0; k < 1000 && fd < 0; k++) {
        snprintf(o->tmp, tl, "%s.tmp.%ld.%d", base, (long)getpid(), k);
        fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        wl_error_set(err, path, 0, "", "cannot create output: %s", strerror(errno));
        out_free(o);
        return WL_EIO;
    }
    if (exists)
        (void)fchmod(fd, mode); /* the old file's permissions, umask aside */
    o->f = out_stream(o, fd);
    if (!o->f) {
        wl_error_set(err, path, 0, "", "cannot create output: %s", strerror(errno));
        close(fd);
        unlink(o->tmp);
        out_free(o);
        return WL_EIO;
    }
    o->mode = OUT_ATOMIC;
    *out = o;
    return WL_OK;
}

int wl_results_out_open_held(const char *path, wl_results_out **out, wl_error *err)
{
    if (strcmp(path, "-"))
        return wl_results_out_open(path, out, err);
    *out = NULL;
    wl_results_out *o = calloc(1, sizeof *o);
    if (!o || !(o->f = open_memstream(&o->held, &o->held_len))) {
        free(o);
        wl_error_set(err, "<stdout>", 0, "", "out of memory");
        return WL_ENOMEM;
    }
    o->lock_fd = -1;
    o->mode = OUT_HELD;
    *out = o;
    return WL_OK;
}

FILE *wl_results_out_stream(wl_results_out *o) { return o->f; }

int wl_results_out_isatty(const wl_results_out *o)
{
    return o->mode == OUT_STDOUT && isatty(STDOUT_FILENO);
}

static int out_commit(wl_results_out *o, const char *suffix, wl_error *err);

int wl_results_out_commit(wl_results_out *o, wl_error *err)
{
    /* a call stopped (wl_stop_watch) leaves the final name as it was,
     * whatever it had written: its caller raises the stop, not a result */
    if (o->mode != OUT_STDOUT && wl_stop_requested()) {
        wl_error_set(err, o->path, 0, "", "stopped");
        wl_results_out_abort(o);
        return WL_ESTOPPED;
    }
    return out_commit(o, NULL, err);
}

int wl_results_out_commit_partial(wl_results_out *o, char *name, size_t cap, wl_error *err)
{
    if (cap)
        name[0] = 0;
    if (o->mode == OUT_ATOMIC)
        snprintf(name, cap, "%s.partial", o->path);
    return out_commit(o, ".partial", err);
}

static int out_commit(wl_results_out *o, const char *suffix, wl_error *err)
{
    int rc = WL_OK;
    const char *name = o->mode == OUT_STDOUT || o->mode == OUT_HELD ? "<stdout>" : o->path;
    if (o->mode == OUT_HELD) {
        int bad = fclose(o->f) != 0;
        errno = 0;
        if (!bad && o->held_len)
            bad = fwrite(o->held, 1, o->held_len, stdout) != o->held_len;
        if (bad || fflush(stdout) != 0 || ferror(stdout)) {
            wl_error_set(err, name, 0, "", "write error: %s", strerror(errno ? errno : EIO));
            rc = WL_EIO;
        }
        out_free(o);
        return rc;
    }
    if (o->mode == OUT_STDOUT) {
        errno = 0;
        if (fflush(stdout) != 0 || ferror(stdout)) {
            wl_error_set(err, name, 0, "", "write error: %s", strerror(errno ? errno : EIO));
            rc = WL_EIO;
        }
        out_free(o);
        return rc;
    }
    int bad = fflush(o->f) != 0 || ferror(o->f);
    bad |= fclose(o->f) != 0;
    int saved = o->write_err;
    if (bad) {
        wl_error_set(err, name, 0, "", "write error: %s", strerror(saved ? saved : EIO));
        rc = WL_EIO;
        if (o->mode == OUT_ATOMIC)
            unlink(o->tmp);
    } else if (o->mode == OUT_ATOMIC) {
        /* a partial output goes beside the file, which it leaves whole */
        const char *final = o->dest ? o->dest : o->path;
        char *dest = suffix ? wl_core_strprintf("%s%s", final, suffix) : NULL;
        if ((suffix && !dest) || rename(o->tmp, dest ? dest : final) != 0) {
            wl_error_set(err, name, 0, "", "cannot rename the output into place: %s",
                         dest ? strerror(errno) : "out of memory");
            unlink(o->tmp);
            rc = WL_EIO;
        }
        free(dest);
    }
    out_free(o);
    return rc;
}

void wl_results_out_abort(wl_results_out *o)
{
    if (!o)
        return;
    if (o->mode != OUT_STDOUT) {
        fclose(o->f); /* OUT_HELD: the held text is dropped with o */
        if (o->mode == OUT_ATOMIC)
            unlink(o->tmp);
    }
    out_free(o);
}


/* ---- an output never one of the inputs --------------------------------------------- */

/* What a path names: an existing file or folder by device and inode, a
 * file not made yet by its folder and its name. kind: 0 nothing usable
 * (skipped), 1 a regular file or a name to be made, 2 a folder. */
typedef struct {
    dev_t dev;
    ino_t ino;
    int named;     /* not made yet: name in the folder */
    char name[256];
    int kind;
} path_id;

/* The folder p is in ("." for a bare name, "/" for "/x"); nonzero when
 * it does not fit. */
static int parent_dir(const char *p, char *dir, size_t cap)
{
    const char *sl = strrchr(p, '/');
    if (!sl)
        return snprintf(dir, cap, ".") >= (int)cap;
    if ((size_t)(sl - p) >= cap)
        return 1;
    snprintf(dir, cap, "%.*s", sl == p ? 1 : (int)(sl - p), p);
    return 0;
}

static path_id path_identity_at(const char *p, int depth)
{
    path_id id = {0};
    struct stat st;
    if (!p || !p[0] || !strcmp(p, "-"))
        return id;
    if (stat(p, &st) == 0) {
        if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
            id.dev = st.st_dev;
            id.ino = st.st_ino;
            id.kind = S_ISDIR(st.st_mode) ? 2 : 1;
        }
        return id;
    }
    const char *sl = strrchr(p, '/');
    char target[4096];
    ssize_t tl;
    if (depth < 8 && lstat(p, &st) == 0 && S_ISLNK(st.st_mode) &&
        (tl = readlink(p, target, sizeof target - 1)) > 0) {
        /* a link that names no file yet: the file it will make (the
         * invariants found -o x.ini beside --host-out LINK -> x.ini, one
         * file once written, taken as two) */
        target[tl] = 0;
        char *next = target[0] == '/' || !sl
                         ? wl_core_strprintf("%s", target)
                         : wl_core_strprintf("%.*s/%s", (int)(sl - p), p, target);
        if (next)
            id = path_identity_at(next, depth + 1);
        free(next);
        return id;
    }
    char dir[4096];
    if (parent_dir(p, dir, sizeof dir))
        return id;
    const char *name = sl ? sl + 1 : p;
    if (name[0] && strlen(name) < sizeof id.name && stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) {
        id.dev = st.st_dev;
        id.ino = st.st_ino;
        id.named = 1;
        snprintf(id.name, sizeof id.name, "%s", name);
        id.kind = 1;
    }
    return id;
}

static path_id path_identity(const char *p) { return path_identity_at(p, 0); }

static int same_path(const path_id *a, const path_id *b)
{
    if (!a->kind || !b->kind || a->dev != b->dev || a->ino != b->ino)
        return 0;
    return a->named == b->named && (!a->named || !strcmp(a->name, b->name));
}

/* Whether folder dir holds the file p (at any depth), by the folders
 * above p's real path. */
static int folder_holds(const path_id *dir, const char *p)
{
    char *real = realpath(p, NULL);
    if (!real)
        return 0;
    int in = 0;
    for (char *sl = strrchr(real, '/'); sl && !in; sl = strrchr(real, '/')) {
        *(sl == real ? sl + 1 : sl) = 0;
        struct stat st;
        in = stat(real, &st) == 0 && st.st_dev == dir->dev && st.st_ino == dir->ino;
        if (sl == real)
            break;
    }
    free(real);
    return in;
}

int wl_results_paths_distinct(const wl_results_path *in, size_t nin, const wl_results_path *out,
                              size_t nout, wl_error *err)
{
    /* each path's identity once (a stat, or two for a name not made yet),
     * not once per pair */
    path_id *idn = nin + nout ? calloc(nin + nout, sizeof *idn) : NULL;
    if (nin + nout && !idn) {
        wl_error_set(err, "", 0, "", "out of memory comparing outputs with inputs");
        return WL_ENOMEM;
    }
    path_id *ix = idn, *ox = idn + nin;
    for (size_t j = 0; j < nin; j++)
        ix[j] = path_identity(in[j].path);
    for (size_t i = 0; i < nout; i++)
        ox[i] = path_identity(out[i].path);
    int rc = WL_OK;
    for (size_t i = 0; i < nout && !rc; i++) {
        const path_id *o = &ox[i];
        if (!o->kind)
            continue;
        for (size_t j = 0; j < nin && !rc; j++) {
            if (same_path(o, &ix[j])) {
                wl_error_set(err, out[i].path, 0, out[i].what,
                             "is the same %s as %s %s (links followed): an output is never one "
                             "of the inputs; write it elsewhere", o->kind == 2 ? "folder" : "file",
                             in[j].what, in[j].path);
                rc = WL_EINVAL;
            } else if (o->kind == 2 && !o->named && ix[j].kind == 1 &&
                       folder_holds(o, in[j].path)) {
                wl_error_set(err, out[i].path, 0, out[i].what,
                             "holds %s %s, which the output folder's files could replace: an "
                             "output is never one of the inputs; write it elsewhere", in[j].what,
                             in[j].path);
                rc = WL_EINVAL;
            }
        }
        for (size_t j = 0; j < i && !rc; j++)
            if (same_path(o, &ox[j])) {
                wl_error_set(err, out[i].path, 0, out[i].what,
                             "is the same file as %s %s (links followed): two outputs would "
                             "overwrite each other", out[j].what, out[j].path);
                rc = WL_EINVAL;
            }
    }
    free(idn);
    return rc;
}


/* ---- files named inside data files --------------------------------------------------- */

int wl_results_row_names_file(const char *v)
{
    static const char *const ext[] = {".ini", ".csv", ".json", ".json.gz"};
    size_t n = strlen(v);
    if (strchr(v, '/'))
        return 1;
    for (size_t k = 0; k < sizeof ext / sizeof *ext; k++) {
        size_t l = strlen(ext[k]);
        if (n > l && !strcmp(v + n - l, ext[k]))
            return 1;
    }
    return 0;
}

int wl_results_row_path(const char *data_path, int line, const char *column, const char *value,
                        char *out, size_t cap, wl_error *err)
{
    if (!wl_results_row_names_file(value)) {
        if ((size_t)snprintf(out, cap, "%s", value) >= cap) {
            wl_error_set(err, data_path, line, column, "longer than %zu characters", cap - 1);
            return WL_EINVAL;
        }
        return WL_OK;
    }
    /* the data file's folder, real */
    char dir[4096];
    if (parent_dir(data_path, dir, sizeof dir)) {
        wl_error_set(err, data_path, line, column, "path longer than %zu characters", sizeof dir - 1);
        return WL_EINVAL;
    }
    char want[8192];
    if (value[0] == '/')
        snprintf(want, sizeof want, "%s", value);
    else
        snprintf(want, sizeof want, "%s/%s", dir, value);
    char *base = realpath(dir, NULL), *real = realpath(want, NULL);
    int rc = WL_OK;
    size_t bl = base ? strlen(base) : 0;
    if (!base || !real) {
        wl_error_set(err, data_path, line, column,
                     "'%.200s' names no file under %s's folder (a file a row names is found "
                     "beside the data, or below it)", value, data_path);
        rc = WL_EINVAL;
    } else if (strncmp(real, base, bl) || (real[bl] != '/' && !(bl == 1 && base[0] == '/'))) {
        wl_error_set(err, data_path, line, column,
                     "'%.200s' is outside %s's folder: a file a row names must be beside the "
                     "data, or below it", value, data_path);
        rc = WL_EINVAL;
    } else if ((size_t)snprintf(out, cap, "%s", real) >= cap) {
        wl_error_set(err, data_path, line, column, "path longer than %zu characters", cap - 1);
        rc = WL_EINVAL;
    }
    free(base);
    free(real);
    return rc;
}
