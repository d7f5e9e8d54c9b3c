/*
 * outfile.h - all-or-nothing output files.
 *
 * An output is written to a temporary file in the destination directory
 * (PATH.tmp.XXXXXX) and renamed over PATH only when complete, so a failure
 * never leaves a partial or empty PATH behind. Temporary files are removed
 * on error, and on SIGINT / SIGTERM / SIGHUP.
 */
#ifndef TC_TOOLS_OUTFILE_H
#define TC_TOOLS_OUTFILE_H

#include <stdio.h>

typedef struct tool_outfile {
    const char *path; /* destination (borrowed) */
    char *tmp;        /* temporary name, owned; NULL when closed */
    FILE *fp;         /* open on tmp */
} tool_outfile;

/* Creates the temporary file. Fails (returns 1, message printed) when path
 * is a directory or its directory is not writable. */
int tool_outfile_open(tool_outfile *of, const char *path);
/* Closes and renames the temporary file to the destination. Returns 0, or
 * 1 with a message printed and the temporary file removed. */
int tool_outfile_commit(tool_outfile *of);
/* Closes and removes the temporary file, if any. Safe on a zeroed struct
 * and after commit. */
void tool_outfile_abort(tool_outfile *of);

#endif /* TC_TOOLS_OUTFILE_H */
