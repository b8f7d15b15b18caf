/* The fuzz targets' shared helpers; see fuzzutil.h. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzzutil.h"

static char	dir[256];
static int	err_fd = 2;
static pid_t	owner;

static void
rmtree(const char *path)
{
	DIR		*d;
	struct dirent	*de;
	char		 sub[1024];
	struct stat	 sb;

	if ((d = opendir(path)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		if (lstat(sub, &sb) == 0 && S_ISDIR(sb.st_mode)) {
			rmtree(sub);
			rmdir(sub);
		} else
			unlink(sub);
	}
	closedir(d);
}

static void
remove_dir(void)
{
	if (getpid() != owner)	/* a child that got here */
		return;
	rmtree(dir);
	rmdir(dir);
}

void
fz_init(void)
{
	const char	*tmp = getenv("TMPDIR");

	if (dir[0] != '\0')
		return;
	if ((err_fd = dup(2)) == -1)
		err_fd = 2;
	if (tmp == NULL || *tmp == '\0')
		tmp = "/tmp";
	snprintf(dir, sizeof(dir), "%s/lbagent-fuzz-XXXXXX", tmp);
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		abort();
	}
	owner = getpid();
	atexit(remove_dir);
}

const char *
fz_dir(void)
{
	return dir;
}

const char *
fz_write(const char *name, const void *data, size_t len)
{
	static char	 path[512];
	int		 fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (data == NULL)
		return path;
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1 || (len > 0 && write(fd, data, len) != (ssize_t)len)) {
		perror(path);
		abort();
	}
	close(fd);
	return path;
}

void
fz_clean(void)
{
	rmtree(dir);
}

char *
fz_str(const uint8_t *data, size_t len)
{
	char	*s = malloc(len + 1);

	if (s == NULL)
		abort();
	if (len > 0)
		memcpy(s, data, len);
	s[len] = '\0';
	return s;
}

void
fz_note(const char *text, size_t len)
{
	dprintf(err_fd, "%.*s\n", (int)len, text);
}

void
fz_fail(const char *file, int line, const char *what)
{
	dprintf(err_fd, "%s:%d: property failed: %s\n", file, line, what);
	abort();
}
