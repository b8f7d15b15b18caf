/*
 * "Did you mean": the nearest of a list of known words to a misspelt one,
 * by edit distance. Pure.
 */
#ifndef LBAGENT_SUGGEST_H
#define LBAGENT_SUGGEST_H

#include <stddef.h>

/* Words longer than this are never compared (their distance is SIZE_MAX). */
#define SUGGEST_LEN_MAX	64

/*
 * The optimal string alignment distance between a and b: insertions,
 * deletions, substitutions and transpositions of two neighbours, each 1.
 */
size_t		 suggest_distance(const char *a, const char *b);

/*
 * The word of words[0..n) nearest to word, when near enough to be a typo
 * of it (a distance of at most 1 for words of up to 4 characters, 2 up to
 * 8, else 3, and less than word's length): the first of equals; NULL
 * when none is, or word is one of them.
 */
const char	*suggest_nearest(const char *word, const char *const *words,
		    size_t n);

#endif
