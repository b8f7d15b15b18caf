/* The bearer token's file: its first line, for the daemon and lbagentctl. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "lbagent/sys/token_file.h"

ssize_t
token_file_read(const char *path, char *out, const char **why)
{
	char	buf[TOKEN_FILE_MAX + 2], *start, *end;
	ssize_t	n;
	size_t	len;
	int	fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY |
	    O_NONBLOCK)) == -1) {
		*why = strerror(errno);
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n == -1) {
		*why = strerror(errno);
		return -1;
	}
	buf[n] = '\0';
	start = buf + strspn(buf, " \t");
	end = start + strcspn(start, "\r\n");
	while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	len = (size_t)(end - start);
	if (len == 0)
		*why = "empty";
	else if (len > TOKEN_FILE_MAX)
		*why = "longer than " TOKEN_FILE_MAX_TEXT " bytes";
	else {
		memcpy(out, start, len);
		out[len] = '\0';
	}
	explicit_bzero(buf, sizeof(buf));
	return len == 0 || len > TOKEN_FILE_MAX ? -1 : (ssize_t)len;
}
