/*
 * Slabs of fixed-size slots (slab.h). A slot is a small header (its slab,
 * the free list's link) and the object after it, aligned for any type. A
 * slab is on its pool's partial list while it has a free slot and is in
 * use, on the full list when it has none; the empty one goes, or becomes
 * the spare. Under AddressSanitizer a free object is poisoned, so a use
 * after free is still reported as it would be with malloc.
 */
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#include "lbagent/sys/slab.h"

#if defined(__SANITIZE_ADDRESS__)
#define SLAB_ASAN	1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLAB_ASAN	1
#endif
#endif
#ifdef SLAB_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n)	ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n)	ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n)	((void)(p), (void)(n))
#define UNPOISON(p, n)	((void)(p), (void)(n))
#endif

#define ALIGN		alignof(max_align_t)
#define ROUND(n)	(((n) + ALIGN - 1) / ALIGN * ALIGN)

struct slot {
	struct slab	*slab;
	struct slot	*next;		/* slab::free */
};

struct slab {
	struct slab	*prev, *next;	/* slab_pool::partial or ::full */
	struct slot	*free;
	size_t		 used;
	size_t		 fresh;		/* slots never handed out yet */
};

#define SLOT_HEAD	ROUND(sizeof(struct slot))
#define SLAB_HEAD	ROUND(sizeof(struct slab))

static struct slot *
slot_at(struct slab *s, const struct slab_pool *p, size_t i)
{
	return (struct slot *)((char *)s + SLAB_HEAD + i * p->size);
}

static void
list_remove(struct slab **head, struct slab *s)
{
	if (s->prev != NULL)
		s->prev->next = s->next;
	else
		*head = s->next;
	if (s->next != NULL)
		s->next->prev = s->prev;
	s->prev = s->next = NULL;
}

static void
list_push(struct slab **head, struct slab *s)
{
	s->prev = NULL;
	s->next = *head;
	if (*head != NULL)
		(*head)->prev = s;
	*head = s;
}

void
slab_pool_init(struct slab_pool *p, size_t size)
{
	*p = (struct slab_pool){ 0 };
	p->size = SLOT_HEAD + ROUND(size);
	p->per_slab = (SLAB_BYTES - SLAB_HEAD) / p->size;
}

static struct slab *
slab_map(struct slab_pool *p)
{
	struct slab	*s;
	void		*m;

	m = mmap(NULL, SLAB_BYTES, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	s = m;			/* zeroes: no slot used, none free */
	POISON((char *)s + SLAB_HEAD, SLAB_BYTES - SLAB_HEAD);
	p->nslabs++;
	return s;
}

static void
slab_unmap(struct slab_pool *p, struct slab *s)
{
	UNPOISON(s, SLAB_BYTES);
	munmap(s, SLAB_BYTES);
	p->nslabs--;
}

void *
slab_alloc(struct slab_pool *p)
{
	struct slab	*s = p->partial;
	struct slot	*slot;

	if (p->per_slab == 0)
		return NULL;
	if (s == NULL) {
		if ((s = p->spare) != NULL)
			p->spare = NULL;
		else if ((s = slab_map(p)) == NULL)
			return NULL;
		list_push(&p->partial, s);
	}
	if ((slot = s->free) != NULL) {
		UNPOISON(slot, SLOT_HEAD);
		s->free = slot->next;
	} else {
		slot = slot_at(s, p, s->fresh++);
		UNPOISON(slot, SLOT_HEAD);
		slot->slab = s;
	}
	UNPOISON(slot, p->size);
	if (++s->used == p->per_slab) {
		list_remove(&p->partial, s);
		list_push(&p->full, s);
	}
	p->live++;
	return (char *)slot + SLOT_HEAD;
}

void
slab_free(struct slab_pool *p, void *obj)
{
	struct slot	*slot;
	struct slab	*s;

	if (obj == NULL)
		return;
	slot = (struct slot *)((char *)obj - SLOT_HEAD);
	s = slot->slab;
	if (s->used-- == p->per_slab) {
		list_remove(&p->full, s);
		list_push(&p->partial, s);
	}
	p->live--;
	if (s->used == 0) {
		list_remove(&p->partial, s);
		if (p->spare == NULL) {
			/* Starts over as new: its slots are handed out in order. */
			s->free = NULL;
			s->fresh = 0;
			POISON((char *)s + SLAB_HEAD, SLAB_BYTES - SLAB_HEAD);
			p->spare = s;
		} else
			slab_unmap(p, s);
		return;
	}
	slot->next = s->free;
	s->free = slot;
	POISON(obj, p->size - SLOT_HEAD);
}

void
slab_pool_trim(struct slab_pool *p)
{
	if (p->spare != NULL) {
		slab_unmap(p, p->spare);
		p->spare = NULL;
	}
}

void
slab_pool_destroy(struct slab_pool *p)
{
	struct slab	*s;

	slab_pool_trim(p);
	while ((s = p->partial) != NULL) {
		list_remove(&p->partial, s);
		slab_unmap(p, s);
	}
	while ((s = p->full) != NULL) {
		list_remove(&p->full, s);
		slab_unmap(p, s);
	}
	p->live = 0;
}
