/* Whole-file reads with a size cap, and atomic writes (temp file in the same
 * folder, fsync, rename) so a failed or interrupted save never leaves a
 * half-written file where a good one was. */
#include "attnviz/io.h"

#include "file_map.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int io_read_file(const char *path, long max, char **data, size_t *len,
                 AttnErr *err)
{
    struct stat st;
    FILE *f = NULL;
    char *buf = NULL;
    int rc = 0;
    *data = NULL;
    *len = 0;
    if (stat(path, &st) != 0)
        return attn_err_set(err, ATTN_E_IO, path, 0, "%s", strerror(errno));
    if (S_ISDIR(st.st_mode))
        return attn_err_set(err, ATTN_E_IO, path, 0, "is a directory, not a file");
    if (S_ISREG(st.st_mode) && st.st_size > max)
        return attn_err_set(err, ATTN_E_TOO_LARGE, path, 0,
                            "file is %lld bytes; the limit is %ld",
                            (long long)st.st_size, max);
    f = fopen(path, "rb");
    if (!f)
        return attn_err_set(err, ATTN_E_IO, path, 0, "%s", strerror(errno));
    size_t cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 4096, n = 0;
    buf = malloc(cap);
    if (!buf) {
        rc = attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
        goto cleanup;
    }
    for (;;) {
        if (n + 1 >= cap) {
            if ((long)cap > max) {
                rc = attn_err_set(err, ATTN_E_TOO_LARGE, path, 0,
                                  "file is larger than the limit of %ld bytes", max);
                goto cleanup;
            }
            char *p = realloc(buf, cap * 2);
            if (!p) {
                rc = attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
                goto cleanup;
            }
            buf = p;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) {
                rc = attn_err_set(err, ATTN_E_IO, path, 0, "read error: %s",
                                  strerror(errno));
                goto cleanup;
            }
            break;
        }
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    buf = NULL;
cleanup:
    free(buf);
    fclose(f);
    return rc;
}

int io_write_atomic(const char *path, IoWriter writer, void *ctx, AttnErr *err)
{
    size_t n = strlen(path);
    char *tmp = malloc(n + 16);
    FILE *f = NULL;
    int fd = -1, rc = 0;
    struct stat st;
    if (!tmp)
        return attn_err_set(err, ATTN_E_NOMEM, path, 0, "out of memory");
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        rc = attn_err_set(err, ATTN_E_IO, path, 0, "is a directory");
        goto cleanup;
    }
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp-XXXXXX", 12);
    fd = mkstemp(tmp);
    if (fd < 0) {
        rc = attn_err_set(err, ATTN_E_IO, path, 0, "cannot create a file there: %s",
                          strerror(errno));
        goto cleanup;
    }
    /* the mode a new file would get, or the replaced file's own */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, exists ? st.st_mode & 07777 : 0666 & ~mask);
    f = fdopen(fd, "wb");
    if (!f) {
        rc = attn_err_set(err, ATTN_E_IO, path, 0, "%s", strerror(errno));
        close(fd);
        unlink(tmp);
        goto cleanup;
    }
    errno = 0;
    int wrc = writer(f, ctx);
    int ferr = ferror(f) || fflush(f) != 0;
    int e = errno;
    if (!ferr && fsync(fileno(f)) != 0) {
        ferr = 1;
        e = errno;
    }
    if (fclose(f) != 0 && !ferr) {
        ferr = 1;
        e = errno;
    }
    if (wrc < 0 || ferr) {
        unlink(tmp);
        rc = attn_err_set(err, ATTN_E_IO, path, 0, "write failed: %s",
                          e ? strerror(e) : "writer error");
        goto cleanup;
    }
    if (rename(tmp, path) != 0) {
        e = errno;
        unlink(tmp);
        rc = attn_err_set(err, ATTN_E_IO, path, 0, "cannot replace the file: %s",
                          strerror(e));
        goto cleanup;
    }
    /* make the rename itself durable: sync the folder */
    char *slash = strrchr(tmp, '/');
    if (slash)
        *slash = '\0';
    int dfd = open(slash ? (slash == tmp ? "/" : tmp) : ".", O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
cleanup:
    free(tmp);
    return rc;
}

int io_map_file(const char *path, int missing, void **map, size_t *len, AttnErr *err)
{
    struct stat st;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return attn_err_set(err, errno == ENOENT ? missing : ATTN_E_IO, path, 0, "%s", strerror(errno));
    int rc = 0;
    if (fstat(fd, &st) != 0)
        rc = attn_err_set(err, ATTN_E_IO, path, 0, "%s", strerror(errno));
    else if (S_ISDIR(st.st_mode))
        rc = attn_err_set(err, ATTN_E_IO, path, 0, "is a directory, not a file");
    else if (!S_ISREG(st.st_mode))
        rc = attn_err_set(err, ATTN_E_IO, path, 0, "is not a regular file");
    else if (st.st_size == 0)
        rc = attn_err_set(err, ATTN_E_EMPTY, path, 0, "empty file");
    if (rc == 0) {
        *map = io_map_fd(fd, (size_t)st.st_size);
        if (!*map) {
            rc = attn_err_set(err, ATTN_E_IO, path, 0, "cannot map: %s", strerror(errno));
        } else {
            *len = (size_t)st.st_size;
        }
    }
    close(fd);
    return rc;
}
