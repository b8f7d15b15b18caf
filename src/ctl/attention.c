/*
 * What needs the operator although every service may serve, said first
 * by status (text and --short) and why, and status's exit status 5: the
 * last reload failed (an older configuration runs), or a load balancer
 * asked lately for a service no [service] has (a typo in its agent-send).
 */
#include <stdio.h>

#include "lbagent/ctl/format.h"
#include "fmt.h"

static bool
reload_failed(const json_t *root)
{
	const json_t	*lr = json_object_get(root, "last_reload");

	return json_is_object(lr) && json_is_false(json_object_get(lr, "ok"));
}

bool
ctl_attention(const json_t *root)
{
	const json_t	*n;
	size_t		 i;

	if (reload_failed(root))
		return true;
	json_array_foreach(json_object_get(root, "unknown_names"), i, n)
		if (json_is_true(json_object_get(n, "recent")))
			return true;
	return false;
}

void
ctl_format_attention(FILE *fp, const json_t *root, unsigned width)
{
	struct fmt_out	 out = { fp, width < 40 ? 40 : width }, *o = &out;
	const json_t	*n;
	char		 t[64], name[TEXT_MAX], from[TEXT_MAX];
	double		 checks = 0;
	size_t		 i;

	if (reload_failed(root)) {
		fmt_time(t, sizeof(t), fmt_str(json_object_get(root,
		    "last_reload"), "at"));
		fmt_paraf(o, 0, "", 2, "ATTENTION: running an older "
		    "configuration: the last reload (%s) failed; `lbagentctl "
		    "check` says why", t);
	}
	json_array_foreach(json_object_get(root, "unknown_names"), i, n) {
		if (!json_is_true(json_object_get(n, "recent")))
			continue;
		fmt_clean(name, sizeof(name), fmt_str(n, "name"));
		fmt_clean(from, sizeof(from), fmt_str(n, "from"));
		fmt_num(n, "checks", &checks);
		fmt_paraf(o, 0, "", 2, "ATTENTION: %s asks for service '%s', "
		    "which does not exist: answered as the default (%.0f "
		    "check%s); a typo in its agent-send?", from, name, checks,
		    checks == 1 ? "" : "s");
	}
}
