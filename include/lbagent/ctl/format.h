/*
 * lbagentctl: the status document as text.
 */
#ifndef LBAGENT_CTL_FORMAT_H
#define LBAGENT_CTL_FORMAT_H

#include <stdio.h>

#include <jansson.h>

/* The service object of that name in a /status document, or NULL. */
const json_t	*ctl_service(const json_t *root, const char *name);

/* "(default)" for "", the name otherwise. */
const char	*ctl_service_label(const char *name);

/*
 * Writes the status document as text in at most width columns: a summary
 * of every service, then, with detail, one section per service (only that
 * one when service is not NULL).
 */
void		 ctl_format_status(FILE *, const json_t *root,
		    const char *service, unsigned width);

#endif
