/*
 * output.h - the output-file rule, once for every sink and command that
 * writes a file: "-" is standard output; an existing file is refused
 * unless forced; a forced overwrite writes a temporary file in the same
 * directory, renamed over the target only when the run succeeded, so a
 * failed run never destroys what was there; the file being read is never
 * the file written.
 */
#ifndef PIPE_OUTPUT_H
#define PIPE_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

struct pipe_err;
struct output;

/*
 * Open `path` for writing.  `force` allows replacing an existing regular
 * file; `force_hint` is the hint printed when it exists and force is off
 * ("add force=on to overwrite it: ..."); `input` (may be NULL) is the path
 * this run reads, refused as an output.  Existing devices and fifos are
 * written in place.  On success *out is owned by the caller
 * (output_commit or output_abort frees it); output_file() gives the
 * stream to write.
 */
int output_open(struct output **out, const char *path, bool force,
		const char *force_hint, const char *input,
		struct pipe_err *err);
/* The stream to write (stdout for "-"); owned by o: never fclose it. */
FILE *output_file(const struct output *o);
/* The path the user named. */
const char *output_path(const struct output *o);
/*
 * The run succeeded: flush, and put a temporary file in place of the
 * target.  Frees o.  Returns 0 or a negative errno with err set ("cannot
 * write 'x': No space left on device").
 */
int output_commit(struct output *o, struct pipe_err *err);
/*
 * The run failed: a temporary file is removed (the old file stays), a
 * file this run created is kept when something was written to it (a
 * pipe file is readable up to its last block) and removed when empty.
 * Frees o; NULL is a no-op.
 */
void output_abort(struct output *o);

#endif
