/*
 * lbagentctl's commands and what they share (cmd.c): main.c dispatches
 * to them; cmd_status.c (status, why, fleet), cmd_marker.c (maint, drain,
 * mode), cmd_wait.c (their --wait) and cmd_config.c (check, reload) hold
 * them.
 */
#ifndef LBAGENT_CTL_CMD_H
#define LBAGENT_CTL_CMD_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "lbagent/ctl/args.h"
#include "lbagent/ctl/client.h"
#include "lbagent/ctl/conf.h"
#include "lbagent/daemon/config.h"

#define WIDTH		80
#define MAX_ADDRS	(CONFIG_MAX_LISTEN + 1)
#define ERR_MAX		512

/* One run of lbagentctl: its options, configuration and way to lbagent. */
struct ctl {
	const struct ctl_opts	*o;
	const char		*config_path;
	struct ctl_conf		 conf;
	bool			 have_conf;
	struct ctl_addr		 addrs[MAX_ADDRS];
	size_t			 naddrs;
	const struct ctl_addr	*addr;		/* the one that answered */
	const char		*token_file;
	char			*token;		/* never printed */
	bool			 token_read;
	bool			 token_refused;
};

/* How a command takes a configuration it cannot read, or with errors. */
enum cmd_need {
	CMD_NEED,	/* cannot go on without it */
	CMD_NEED_QUIET,	/* reload: the daemon reports the errors itself */
	CMD_OPTIONAL,	/* -s given: only the token comes from it */
};

/* An error for the operator, on stderr, as "lbagentctl: ...". */
void		 cmd_errx(const char *fmt, ...)
		    __attribute__((format(printf, 1, 2)));

/* Untrusted text (the daemon's, a peer's, HAProxy's, a file's), printable. */
const char	*cmd_safe(char *buf, size_t size, const char *s);

/* The monotonic clock in seconds, and a sleep that outlasts signals. */
double		 cmd_now_s(void);
void		 cmd_sleep_ms(long ms);

/* Loads what lbagentctl needs of the configuration; -1 said why. */
int		 cmd_load_config(struct ctl *, enum cmd_need);

/* Where to find the daemon: -s, else the config's [http] listen. */
int		 cmd_setup_addresses(struct ctl *);

/*
 * GET /status from the daemon, as JSON. With CTL_HTTP_OK *root is the
 * document (or NULL when it was not one, with err set).
 */
enum ctl_http_result cmd_get_status(struct ctl *, json_t **root, char *err,
		    size_t errsize);

/* The message for a daemon that could not be asked at all. */
void		 cmd_report_unreachable(const struct ctl *,
		    enum ctl_http_result, const char *err);

/* One status document, or an error reported and NULL. */
json_t		*cmd_status_once(struct ctl *);

/* Whether the document has lbagent's detail (the socket, the token). */
bool		 cmd_has_detail(const json_t *root);

/*
 * The status that status, why and fleet show, with --service checked
 * against it; cmd and detail_for, when not NULL, say that the command
 * needs the detail and what for. NULL, said why, on failure.
 */
json_t		*cmd_status_for(struct ctl *, const char *cmd,
		    const char *detail_for);

/* The commands: each returns lbagentctl's exit status. */
int		 cmd_status(struct ctl *);
int		 cmd_why(struct ctl *);
int		 cmd_fleet(struct ctl *);
int		 cmd_marker(struct ctl *);	/* maint, drain, mode */
int		 cmd_check(struct ctl *);
int		 cmd_reload(struct ctl *);

/*
 * maint/drain on --wait: whether lbagent can tell when the load balancers
 * have drained, before path is written (0), or -1 said why; then the
 * wait itself, until deadline (cmd_now_s): an exit status.
 */
int		 cmd_wait_possible(struct ctl *, const char *path);
int		 cmd_wait_drained(struct ctl *, double deadline);

#endif
