/*
 * Files replaced whole, so that a reader sees the old one or the new one,
 * never half of either, and the new one lasts a crash once written: a
 * temporary file of our own in the same directory, synced, renamed over
 * the old one, and the directory synced. The state file and lbagentctl's
 * markers are written this way.
 */
#ifndef LBAGENT_ATOMIC_FILE_H
#define LBAGENT_ATOMIC_FILE_H

#include <limits.h>
#include <sys/types.h>

/* The step that failed, so that each caller says it in its own words. */
enum atomic_file_step {
	ATOMIC_FILE_TMP_NAME,	/* the temporary file's name is too long */
	ATOMIC_FILE_CREATE,	/* making the temporary file */
	ATOMIC_FILE_WRITE,	/* writing, syncing or closing it */
	ATOMIC_FILE_RENAME,	/* renaming it to path */
	ATOMIC_FILE_DIR_OPEN,	/* opening the directory to sync it */
	ATOMIC_FILE_DIR_SYNC,	/* syncing it */
};

struct atomic_file_error {
	enum atomic_file_step	step;
	int			error;		/* errno */
	char			tmp[PATH_MAX];	/* the temporary file */
};

/*
 * The temporary file is tmp itself, a name the caller owns: whatever
 * stands there (a link, a leftover) is removed, never written through.
 * With ATOMIC_FILE_UNIQUE, tmp is a prefix made unique per process and per
 * call, for writers that may run at the same time.
 */
#define ATOMIC_FILE_UNIQUE	0x1

/*
 * Replaces path, in directory dir, with text and a newline (an empty file
 * when text is NULL), created with mode less the umask. Returns 0, or -1
 * with errno and *e set; the temporary file is gone either way. A failure
 * to sync dir comes after the rename: path is already the new file.
 */
int	atomic_file_write(const char *dir, const char *path, const char *tmp,
	    int flags, const char *text, mode_t mode,
	    struct atomic_file_error *e);

/* Syncs a directory, so that a rename or unlink in it lasts a crash. */
int	atomic_file_sync_dir(const char *dir, struct atomic_file_error *e);

#endif
