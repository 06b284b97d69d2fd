/* nif_pointers.c — the addresses Nx.to_pointer/2 (mode :local) gives out.
 *
 * The engine can only wrap memory it owns, so Nx.from_pointer/5 with a :local
 * pointer accepts the addresses this NIF gave out, while the tensor that gave
 * them is alive: each is recorded with the tensor resource and the array it
 * held then, without a reference, so recording one keeps nothing alive. The
 * tensor's destructor forgets its addresses; a tensor that was deallocated,
 * or whose array changed since, no longer vouches for its old address. */
#include "emlx_nif.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct local_ptr {
  uintptr_t address;
  size_t size;
  nif_tensor *owner;
  const emlx_array *array; /* not retained: compared, never dereferenced */
} local_ptr;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static local_ptr *table;
static size_t count, cap;

static size_t find(uintptr_t address, const nif_tensor *owner) {
  for (size_t i = 0; i < count; i++)
    if (table[i].address == address && table[i].owner == owner)
      return i;
  return count;
}

bool nif_local_export(nif_tensor *owner, const emlx_array *a, uintptr_t address, size_t size) {
  pthread_mutex_lock(&lock);
  size_t i = find(address, owner);
  if (i == count) {
    if (count == cap) {
      size_t grown = cap ? 2 * cap : 16;
      local_ptr *t = realloc(table, grown * sizeof *t);
      if (!t) {
        pthread_mutex_unlock(&lock);
        return false;
      }
      table = t;
      cap = grown;
    }
    count++;
  }
  table[i] = (local_ptr){address, size, owner, a};
  atomic_store_explicit(&owner->exported, true, memory_order_release);
  pthread_mutex_unlock(&lock);
  return true;
}

void nif_local_forget(nif_tensor *owner) {
  if (!atomic_load_explicit(&owner->exported, memory_order_acquire))
    return;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < count;) {
    if (table[i].owner == owner)
      table[i] = table[--count];
    else
      i++;
  }
  pthread_mutex_unlock(&lock);
}

/* A new reference to the array behind address, or NULL (with a reason in
 * why) when no live tensor of this NIF gave out exactly these bytes. */
static emlx_array *local_import(uintptr_t address, size_t size, const char **why) {
  *why = "was not given out by Nx.to_pointer/2 on EMLX.Backend in this VM, or its tensor is gone";
  emlx_array *found = NULL;
  pthread_mutex_lock(&lock);
  /* Several tensors may have given out one address (views of one buffer):
   * any of them that still holds the array it had then vouches for it. An
   * owner is alive while it is in the table (its destructor takes the lock
   * to remove it). */
  for (size_t i = 0; i < count && !found; i++) {
    if (table[i].address != address)
      continue;
    if (table[i].size != size) {
      *why = "was given out with another size";
      continue;
    }
    emlx_array *a = nif_tensor_get(table[i].owner);
    if (a && a == table[i].array && (uintptr_t)emlx_data(a) == address) {
      found = a;
    } else {
      emlx_release(a);
      *why = "belongs to a tensor that was deallocated or rewritten since";
    }
  }
  pthread_mutex_unlock(&lock);
  return found;
}

NIF_HANDLER(h_tensor_from_local_ptr) {
  const char *why = NULL;
  emlx_array *arr = local_import((uintptr_t)a[0].u, (size_t)a[1].u, &why);
  if (!arr)
    return nif_error(c, "address %llu (%llu bytes) %s; EMLX can only wrap memory it owns (use "
                     "mode: :ipc to share memory between processes)",
                     (unsigned long long)a[0].u, (unsigned long long)a[1].u, why);
  return nif_ok_tensor(c, arr);
}
