/* Human values (durations, booleans, counts) parsed in one place. */
#ifndef LBAGENT_UNITS_H
#define LBAGENT_UNITS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Each parser takes the whole string (no leading or trailing junk), stores
 * the value and returns 0, or returns -1 and points *why at a static
 * explanation fit to follow "FILE:LINE: KEY: ".
 */
int	units_duration_ms(const char *s, uint64_t *ms, const char **why);
int	units_bool(const char *s, bool *value, const char **why);
int	units_uint(const char *s, uint64_t *value, const char **why);

/* "85%" or "85.5%": 0 to 100. */
int	units_percent(const char *s, double *pct, const char **why);
/* "5G", "500M", "64K", "1T" (powers of 1024) or plain bytes. */
int	units_size(const char *s, uint64_t *bytes, const char **why);
/* A finite decimal number ("2", "0.75", "-3"). */
int	units_double(const char *s, double *value, const char **why);

/* Formats a duration the way the parser reads it back ("1500ms", "2s", "10m"). */
void	units_format_ms(uint64_t ms, char *buf, unsigned long size);
/*
 * Formats an elapsed time for people, the one format of logs, reasons, status
 * and lbagentctl: "0s", "2.5s", "45s", "1m", "12m05s", "3h20m", "4d03h".
 */
void	units_format_age(uint64_t ms, char *buf, unsigned long size);

#endif
