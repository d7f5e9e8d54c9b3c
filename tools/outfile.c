/*
 * outfile.c - temporary file + rename. See outfile.h.
 */
#include "outfile.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"

/* Temporary names a signal handler must remove. Only async-signal-safe
 * calls (unlink) touch them from the handler. */
#define MAX_PENDING 8
static char *volatile pending[MAX_PENDING];

static void on_signal(int sig) {
    for (int i = 0; i < MAX_PENDING; i++)
        if (pending[i]) unlink(pending[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void track(char *tmp) {
    static int installed;
    if (!installed) {
        installed = 1;
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        signal(SIGHUP, on_signal);
    }
    for (int i = 0; i < MAX_PENDING; i++)
        if (!pending[i]) {
            pending[i] = tmp;
            return;
        }
}

static void untrack(char *tmp) {
    for (int i = 0; i < MAX_PENDING; i++)
        if (pending[i] == tmp) pending[i] = NULL;
}

int tool_outfile_open(tool_outfile *of, const char *path) {
    struct stat st;
    memset(of, 0, sizeof *of);
    of->path = path;
    if (path[0] == 0) return tool_error("empty output file name");
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return tool_error("cannot write '%s': is a directory", path);
    size_t n = strlen(path);
    char *tmp = malloc(n + 12);
    if (!tmp) return tool_error("out of memory");
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp.XXXXXX", 12);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return tool_error("cannot write '%s': %s", path, strerror(e));
    }
    track(tmp);
    /* mkstemp makes the file 0600; give the result the usual 0666 & ~umask. */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask);
    of->tmp = tmp;
    of->fp = fdopen(fd, "wb");
    if (!of->fp) {
        int e = errno;
        close(fd);
        tool_outfile_abort(of);
        return tool_error("cannot write '%s': %s", path, strerror(e));
    }
    return 0;
}

int tool_outfile_commit(tool_outfile *of) {
    int e = 0;
    if (!of->tmp) return tool_error("internal: output '%s' not open", of->path);
    errno = 0;
    if (fflush(of->fp) != 0 || ferror(of->fp)) e = errno ? errno : EIO;
    if (fclose(of->fp) != 0 && !e) e = errno ? errno : EIO;
    of->fp = NULL;
    if (!e && rename(of->tmp, of->path) != 0) e = errno;
    if (e) {
        tool_outfile_abort(of);
        return tool_error("cannot write '%s': %s", of->path, strerror(e));
    }
    untrack(of->tmp);
    free(of->tmp);
    of->tmp = NULL;
    return 0;
}

void tool_outfile_abort(tool_outfile *of) {
    if (of->fp) fclose(of->fp);
    of->fp = NULL;
    if (of->tmp) {
        unlink(of->tmp);
        untrack(of->tmp);
        free(of->tmp);
        of->tmp = NULL;
    }
}
