/*
 * Fixed-size objects from slabs of SLAB_BYTES mapped with mmap(2), each
 * unmapped as soon as it is empty (one empty slab is kept until
 * slab_pool_trim, so that a count going up and down across a slab's
 * boundary does not map and unmap at every step). What a burst of objects
 * took goes back to the kernel when they are freed, which malloc's heap
 * cannot promise: a few objects still in use pin every page around them.
 */
#ifndef LBAGENT_SLAB_H
#define LBAGENT_SLAB_H

#include <stddef.h>

#define SLAB_BYTES	(64 * 1024)

struct slab;

struct slab_pool {
	size_t		 size;		/* of a slot: the object and its header */
	size_t		 per_slab;
	struct slab	*partial;	/* with free slots, in use */
	struct slab	*full;
	struct slab	*spare;		/* empty, kept: slab_pool_trim */
	size_t		 nslabs;	/* mapped, spare included */
	size_t		 live;		/* objects handed out */
};

/* size: the objects' (at most a slab's worth, less the headers). */
void	 slab_pool_init(struct slab_pool *, size_t size);
/* An object of unspecified content (zeroes when its slab is new); NULL
 * when no slab can be mapped. */
void	*slab_alloc(struct slab_pool *);
void	 slab_free(struct slab_pool *, void *);
/* Unmaps the empty slab kept for reuse. */
void	 slab_pool_trim(struct slab_pool *);
/* Unmaps every slab: the objects still handed out are gone with them. */
void	 slab_pool_destroy(struct slab_pool *);

#endif
