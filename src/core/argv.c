/*
 * Shell-like word splitting for exec probes. A command copied from a shell
 * either means the same here or is refused: anything a shell would act on
 * (pipes, redirection, expansion) has no shell to act on it.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/argv.h"

#define NO_SHELL \
	" needs a shell, and commands run without one: quote it, or write " \
	"sh -c '...' explicitly"

/* Why the syntax at p would need a shell; NULL when it is a plain byte. */
static const char *
shell_syntax(const char *p, bool in_dquotes)
{
	if (p[0] == '`')
		return "command substitution (`...`)" NO_SHELL;
	if (p[0] == '$') {
		if (p[1] == '(')
			return "command substitution ($(...))" NO_SHELL;
		if (isalnum((unsigned char)p[1]) || (p[1] != '\0' &&
		    strchr("{_?$#!@*-", p[1]) != NULL))
			return "variable expansion ($NAME)" NO_SHELL;
		return NULL;
	}
	if (in_dquotes)
		return NULL;
	switch (p[0]) {
	case '|':
		return "a pipe (|)" NO_SHELL;
	case '&':
		return "& or &&" NO_SHELL;
	case ';':
		return "a command separator (;)" NO_SHELL;
	case '\n':
		return "a newline (a command separator)" NO_SHELL;
	case '<':
	case '>':
		return "redirection (< or >)" NO_SHELL;
	case '(':
	case ')':
		return "a subshell ( ( or ) )" NO_SHELL;
	}
	return NULL;
}

/* Appends the word in buf[0..len) to the vector. */
static int
push_word(char ***argvp, size_t *argc, size_t *cap, const char *buf,
    size_t len)
{
	char	**v, *w;

	if (*argc + 1 >= *cap) {
		*cap = *cap == 0 ? 8 : *cap * 2;
		if ((v = realloc(*argvp, *cap * sizeof(*v))) == NULL)
			return -1;
		*argvp = v;
	}
	/* buf is not NUL-terminated: copy exactly len bytes. */
	if ((w = malloc(len + 1)) == NULL)
		return -1;
	memcpy(w, buf, len);
	w[len] = '\0';
	(*argvp)[(*argc)++] = w;
	(*argvp)[*argc] = NULL;
	return 0;
}

int
argv_split(const char *s, char ***argvp, const char **why)
{
	char		**argv = NULL, *buf;
	size_t		  argc = 0, cap = 0, len = 0;
	bool		  in_word = false;
	const char	 *p;

	*argvp = NULL;
	if ((buf = malloc(strlen(s) + 1)) == NULL) {
		*why = "out of memory";
		return -1;
	}
	for (p = s; *p != '\0'; p++) {
		if (*p == ' ' || *p == '\t') {
			if (in_word && push_word(&argv, &argc, &cap, buf, len) == -1)
				goto nomem;
			in_word = false;
			len = 0;
			continue;
		}
		if ((*why = shell_syntax(p, false)) != NULL)
			goto fail;
		if (*p == '\\') {
			if (p[1] == '\0') {
				*why = "a backslash at the end escapes nothing";
				goto fail;
			}
			p++;
			if (*p == '\n')		/* a line continuation */
				continue;
			buf[len++] = *p;
		} else if (*p == '\'') {
			for (p++; *p != '\'' && *p != '\0'; p++)
				buf[len++] = *p;
			if (*p == '\0') {
				*why = "unbalanced single quote";
				goto fail;
			}
		} else if (*p == '"') {
			for (p++; *p != '"' && *p != '\0'; p++) {
				if ((*why = shell_syntax(p, true)) != NULL)
					goto fail;
				if (*p == '\\' && p[1] != '\0' &&
				    strchr("\"\\$`\n", p[1]) != NULL) {
					if (*++p == '\n')
						continue;
				}
				buf[len++] = *p;
			}
			if (*p == '\0') {
				*why = "unbalanced double quote";
				goto fail;
			}
		} else
			buf[len++] = *p;
		in_word = true;
	}
	if (in_word && push_word(&argv, &argc, &cap, buf, len) == -1)
		goto nomem;
	if (argc == 0) {
		*why = "empty command";
		goto fail;
	}
	free(buf);
	*argvp = argv;
	return (int)argc;

nomem:
	*why = "out of memory";
fail:
	free(buf);
	argv_free(argv);
	return -1;
}

void
argv_free(char **argv)
{
	char	**p;

	if (argv == NULL)
		return;
	for (p = argv; *p != NULL; p++)
		free(*p);
	free(argv);
}
