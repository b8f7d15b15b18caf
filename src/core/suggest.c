/* "Did you mean": edit distance over short words. Pure. */
#include <stdint.h>
#include <string.h>

#include "lbagent/core/suggest.h"

size_t
suggest_distance(const char *a, const char *b)
{
	size_t	d[SUGGEST_LEN_MAX + 1][SUGGEST_LEN_MAX + 1];
	size_t	la = strlen(a), lb = strlen(b), i, j, c, v;

	if (la > SUGGEST_LEN_MAX || lb > SUGGEST_LEN_MAX)
		return SIZE_MAX;
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			c = a[i - 1] == b[j - 1] ? 0 : 1;
			v = d[i - 1][j - 1] + c;
			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb];
}

const char *
suggest_nearest(const char *word, const char *const *words, size_t n)
{
	const char	*best = NULL;
	size_t		 len = strlen(word), most, bestd = SIZE_MAX, i, dist;

	most = len <= 4 ? 1 : len <= 8 ? 2 : 3;
	if (most >= len)
		most = len - (len > 0);
	for (i = 0; i < n; i++) {
		if (words[i] == NULL)
			continue;
		dist = suggest_distance(word, words[i]);
		if (dist == 0)
			return NULL;
		if (dist <= most && dist < bestd) {
			best = words[i];
			bestd = dist;
		}
	}
	return best;
}
