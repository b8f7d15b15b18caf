/*
 * What the fuzz targets share: one temp directory per process (removed at
 * exit), files written into it, NUL-terminated copies of the input, and a
 * failed property reported as a crash.
 */
#ifndef LBAGENT_FUZZUTIL_H
#define LBAGENT_FUZZUTIL_H

#include <stddef.h>
#include <stdint.h>

int	LLVMFuzzerInitialize(int *argc, char ***argv);
int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Saves stderr (the runner closes the target's) and makes the temp dir. */
void		 fz_init(void);
/* The process's temp dir, under $TMPDIR or /tmp. */
const char	*fz_dir(void);
/* dir/name in a static buffer; written with data unless data is NULL. */
const char	*fz_write(const char *name, const void *data, size_t len);
/* Removes everything in the temp dir, keeping the dir. */
void		 fz_clean(void);
/* A malloc'd copy of data with a NUL after it. */
char		*fz_str(const uint8_t *data, size_t len);
/* Shows text on the saved stderr, for a property about to fail. */
void		 fz_note(const char *text, size_t len);
/* A property that must hold: otherwise the message and abort(). */
#define FZ_ASSERT(e)	((e) ? (void)0 : fz_fail(__FILE__, __LINE__, #e))
_Noreturn void	 fz_fail(const char *file, int line, const char *what);

#endif
