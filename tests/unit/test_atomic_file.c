/* Files replaced whole: content, mode, temporary files, each failing step. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lbagent/sys/atomic_file.h"
#include "testutil.h"

static char	*dir;
static char	 path[1024], tmp[1024];

static void
setup(void)
{
	dir = tu_tmpdir();
	snprintf(path, sizeof(path), "%s/f", dir);
	snprintf(tmp, sizeof(tmp), "%s/f.tmp", dir);
}

static void
teardown(void)
{
	tu_rmtree(dir);
	free(dir);
}

static char *
slurp(const char *p)
{
	static char	buf[256];
	FILE		*fp;
	size_t		 n;

	ck_assert_ptr_nonnull(fp = fopen(p, "r"));
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

/* Entries of dir, "." and ".." aside. */
static int
entries(void)
{
	DIR		*d;
	struct dirent	*de;
	int		 n = 0;

	ck_assert_ptr_nonnull(d = opendir(dir));
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

START_TEST(writes_and_replaces)
{
	struct atomic_file_error	e;
	struct stat			st;
	mode_t				mask = umask(027);

	ck_assert_int_eq(atomic_file_write(dir, path, tmp, 0, "one", 0666, &e),
	    0);
	ck_assert_str_eq(slurp(path), "one\n");
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0640);
	ck_assert_int_eq(atomic_file_write(dir, path, tmp, 0, "two", 0644, &e),
	    0);
	ck_assert_str_eq(slurp(path), "two\n");
	/* No text: an empty file, as touch makes. */
	ck_assert_int_eq(atomic_file_write(dir, path, tmp, ATOMIC_FILE_UNIQUE,
	    NULL, 0666, &e), 0);
	ck_assert_str_eq(slurp(path), "");
	ck_assert_int_eq(entries(), 1);
	umask(mask);
}
END_TEST

START_TEST(never_through_the_temporary_name)
{
	struct atomic_file_error	 e;
	char				*victim;

	victim = tu_write(dir, "victim", "precious\n", -1);
	ck_assert_int_eq(symlink(victim, tmp), 0);
	ck_assert_int_eq(atomic_file_write(dir, path, tmp, 0, "new", 0644, &e),
	    0);
	ck_assert_str_eq(slurp(victim), "precious\n");
	ck_assert_str_eq(slurp(path), "new\n");
	/* A hard link at tmp: unlinked, not truncated. */
	ck_assert_int_eq(link(victim, tmp), 0);
	ck_assert_int_eq(atomic_file_write(dir, path, tmp, 0, "newer", 0644,
	    &e), 0);
	ck_assert_str_eq(slurp(victim), "precious\n");
	ck_assert_int_eq(access(tmp, F_OK), -1);
	/* A unique name steps over what holds the first one. */
	snprintf(tmp, sizeof(tmp), "%s/.f.%ld.0", dir, (long)getpid());
	ck_assert_int_eq(symlink(victim, tmp), 0);
	snprintf(tmp, sizeof(tmp), "%s/.f", dir);
	ck_assert_int_eq(atomic_file_write(dir, path, tmp, ATOMIC_FILE_UNIQUE,
	    "u", 0644, &e), 0);
	ck_assert_str_eq(slurp(victim), "precious\n");
	ck_assert_str_eq(slurp(path), "u\n");
	ck_assert_int_eq(entries(), 3);
	free(victim);
}
END_TEST

START_TEST(each_step_says_where_it_failed)
{
	struct atomic_file_error	e;
	char				missing[1024], longer[PATH_MAX + 8];

	/* No such directory: the temporary file cannot be made. */
	snprintf(missing, sizeof(missing), "%s/no/f.tmp", dir);
	ck_assert_int_eq(atomic_file_write(dir, path, missing, 0, "x", 0644,
	    &e), -1);
	ck_assert_int_eq(e.step, ATOMIC_FILE_CREATE);
	ck_assert_int_eq(e.error, ENOENT);
	ck_assert_int_eq(errno, ENOENT);
	/* path is a directory: written, then the rename fails. */
	ck_assert_int_eq(mkdir(path, 0755), 0);
	ck_assert_int_eq(atomic_file_write(dir, path, tmp, ATOMIC_FILE_UNIQUE,
	    "x", 0644, &e), -1);
	ck_assert_int_eq(e.step, ATOMIC_FILE_RENAME);
	ck_assert_int_eq(e.error, EISDIR);
	ck_assert_ptr_nonnull(strstr(e.tmp, "/f.tmp."));
	ck_assert_int_eq(access(e.tmp, F_OK), -1);
	ck_assert_int_eq(entries(), 1);
	/* Renamed, but the directory to sync is not there. */
	ck_assert_int_eq(rmdir(path), 0);
	snprintf(missing, sizeof(missing), "%s/no", dir);
	ck_assert_int_eq(atomic_file_write(missing, path, tmp, 0, "x", 0644,
	    &e), -1);
	ck_assert_int_eq(e.step, ATOMIC_FILE_DIR_OPEN);
	ck_assert_str_eq(slurp(path), "x\n");
	ck_assert_int_eq(atomic_file_sync_dir(dir, &e), 0);
	/* A name too long for any path. */
	memset(longer, 'a', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	ck_assert_int_eq(atomic_file_write(dir, path, longer, 0, "x", 0644,
	    &e), -1);
	ck_assert_int_eq(e.step, ATOMIC_FILE_TMP_NAME);
	ck_assert_int_eq(atomic_file_write(dir, path, longer,
	    ATOMIC_FILE_UNIQUE, "x", 0644, &e), -1);
	ck_assert_int_eq(e.step, ATOMIC_FILE_TMP_NAME);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("atomic_file");
	TCase	*tc = tcase_create("atomic_file");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, writes_and_replaces);
	tcase_add_test(tc, never_through_the_temporary_name);
	tcase_add_test(tc, each_step_says_where_it_failed);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
