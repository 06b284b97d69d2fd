/* nif_host.c — the rows about the host rather than the graph: the
 * allocator's counters and limits, POSIX shared memory (tensor_to_shm's
 * writer, array_from_shm, shm_unlink), Metal capture (absent here), device
 * availability, and the NIF's and the scheduler's counters. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "emlx_nif.h"

/* ---- memory ------------------------------------------------------------------- */

NIF_HANDLER(h_memory_info) {
  (void)a;
  emlx_memory_stats s = emlx_memory_info();
  ERL_NIF_TERM keys[3] = {nif_atom.active_memory, nif_atom.peak_memory, nif_atom.cache_memory};
  ERL_NIF_TERM vals[3] = {enif_make_uint64(c->env, s.active_memory),
                          enif_make_uint64(c->env, s.peak_memory),
                          enif_make_uint64(c->env, s.cache_memory)};
  ERL_NIF_TERM map;
  enif_make_map_from_arrays(c->env, keys, vals, 3, &map);
  return nif_ok(c, map);
}

NIF_HANDLER(h_set_cache_limit) {
  return nif_ok(c, enif_make_uint64(c->env, emlx_set_cache_limit((size_t)a[0].u)));
}

NIF_HANDLER(h_set_memory_limit) {
  return nif_ok(c, enif_make_uint64(c->env, emlx_set_memory_limit((size_t)a[0].u)));
}

NIF_HANDLER(h_clear_cache) {
  (void)c;
  (void)a;
  emlx_clear_cache();
  return nif_atom.ok;
}

NIF_HANDLER(h_reset_peak_memory) {
  (void)c;
  (void)a;
  emlx_reset_peak_memory();
  return nif_atom.ok;
}

/* ---- shared memory -------------------------------------------------------------- */

static _Atomic unsigned long shm_counter;

/* Writes a's row-major data into a new segment; its name goes to name. Runs
 * on a queue's worker thread (a is evaluated). */
bool nif_shm_write(emlx_array *a, unsigned perms, char *name, size_t name_len, char *err,
                   size_t err_len);
bool nif_shm_write(emlx_array *a, unsigned perms, char *name, size_t name_len, char *err,
                   size_t err_len) {
  size_t bytes = emlx_nbytes(a);
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long n = atomic_fetch_add(&shm_counter, 1);
    snprintf(name, name_len, "/emlx_%ld_%lu_%lx", (long)getpid(), n,
             (unsigned long)ts.tv_nsec ^ ((unsigned long)(uintptr_t)a >> 4));
    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, (mode_t)perms);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0) {
    snprintf(err, err_len, "shm_open failed: %s", strerror(errno));
    return false;
  }
  const char *failed = NULL;
  if (ftruncate(fd, (off_t)bytes) != 0) {
    failed = "ftruncate";
  } else if (bytes > 0) {
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      failed = "mmap";
    } else {
      if (emlx_to_blob(a, p, bytes) != 0) {
        snprintf(err, err_len, "%s", emlx_last_error());
        munmap(p, bytes);
        close(fd);
        shm_unlink(name);
        return false;
      }
      munmap(p, bytes);
    }
  }
  if (failed) {
    snprintf(err, err_len, "%s failed: %s", failed, strerror(errno));
    close(fd);
    shm_unlink(name);
    return false;
  }
  close(fd);
  return true;
}

/* array_from_shm(name, shape, type, byte_size): copies the segment into a new
 * cpu array and unlinks it (the receiver cleans up). */
NIF_HANDLER(h_array_from_shm) {
  uint64_t need = emlx_dtype_size(a[2].dtype);
  for (int i = 0; i < a[1].n; i++)
    if (__builtin_mul_overflow(need, (uint64_t)a[1].ints[i], &need))
      return nif_error(c, "the shape %T is too large", a[1].term);
  if ((uint64_t)a[3].i != need)
    return nif_error(c, "byte_size %ld does not match shape %T of %s (%lu bytes)", (long)a[3].i,
                     a[1].term, emlx_dtype_name(a[2].dtype), (unsigned long)need);
  if (need > NIF_DIRTY_BYTES && nif_on_normal_scheduler())
    return nif_reschedule_dirty(c);
  int fd = shm_open(a[0].str, O_RDONLY, 0);
  if (fd < 0)
    return nif_error(c, "shm_open(%s) failed: %s", a[0].str, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < need) {
    close(fd);
    return nif_error(c, "the segment %s holds fewer than %lu bytes", a[0].str, (unsigned long)need);
  }
  void *p = NULL;
  if (need > 0) {
    p = mmap(NULL, (size_t)need, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      close(fd);
      return nif_error(c, "mmap failed: %s", strerror(errno));
    }
  }
  emlx_array *arr = emlx_from_blob(p, a[2].dtype, a[1].ints, a[1].n, EMLX_CPU);
  if (p)
    munmap(p, (size_t)need);
  close(fd);
  if (arr)
    shm_unlink(a[0].str);
  return nif_ok_tensor(c, arr);
}

NIF_HANDLER(h_shm_unlink) {
  if (shm_unlink(a[0].str) != 0 && errno != ENOENT)
    return nif_error(c, "shm_unlink(%s) failed: %s", a[0].str, strerror(errno));
  return nif_atom.ok;
}

/* ---- Metal ------------------------------------------------------------------------- */

#define NO_METAL                                                                                   \
  "Metal GPU capture is not available: this EMLX build has no Metal backend (devices: cpu%s)"

NIF_HANDLER(h_metal_start_capture) {
  (void)a;
  return nif_error(c, NO_METAL, emlx_device_available(EMLX_GPU) ? ", gpu" : "");
}

NIF_HANDLER(h_metal_stop_capture) {
  (void)a;
  return nif_error(c, NO_METAL, emlx_device_available(EMLX_GPU) ? ", gpu" : "");
}

/* ---- devices and diagnostics --------------------------------------------------------- */

NIF_HANDLER(h_device_available) {
  return nif_ok(c, emlx_device_available(a[0].device) ? nif_atom.true_ : nif_atom.false_);
}

NIF_HANDLER(h_engine_default_device) {
  (void)a;
  return nif_ok(c, nif_device_atom(emlx_default_device()));
}

NIF_HANDLER(h_runtime_info) {
  (void)a;
  ERL_NIF_TERM keys[3] = {enif_make_atom(c->env, "simd"), enif_make_atom(c->env, "threads"),
                          enif_make_atom(c->env, "version")};
  char version[32];
  snprintf(version, sizeof version, "%d.%d.%d", EMLX_VERSION_MAJOR, EMLX_VERSION_MINOR,
           EMLX_VERSION_PATCH);
  ERL_NIF_TERM vals[3] = {nif_make_string(c->env, emlx_simd_level()),
                          enif_make_int(c->env, emlx_num_threads()),
                          nif_make_string(c->env, version)};
  ERL_NIF_TERM map;
  enif_make_map_from_arrays(c->env, keys, vals, 3, &map);
  return nif_ok(c, map);
}

NIF_HANDLER(h_nif_stats) {
  (void)a;
  ERL_NIF_TERM keys[4] = {nif_atom.tensors, nif_atom.queues, nif_atom.jobs, nif_atom.blobs};
  ERL_NIF_TERM vals[4] = {
      enif_make_long(c->env, atomic_load(&nif_count.tensors)),
      enif_make_long(c->env, atomic_load(&nif_count.queues)),
      enif_make_long(c->env, atomic_load(&nif_count.jobs)),
      enif_make_long(c->env, atomic_load(&nif_count.blobs)),
  };
  ERL_NIF_TERM map;
  enif_make_map_from_arrays(c->env, keys, vals, 4, &map);
  return nif_ok(c, map);
}

/* The scheduler's counters (emlx_eval_stats_get): tests read deltas of
 * nodes_computed to check that shared work is computed once. */
NIF_HANDLER(h_eval_stats) {
  (void)a;
  ERL_NIF_TERM key = enif_make_atom(c->env, "nodes_computed");
  ERL_NIF_TERM val = enif_make_uint64(c->env, emlx_eval_stats_get().nodes_computed);
  ERL_NIF_TERM map;
  enif_make_map_from_arrays(c->env, &key, &val, 1, &map);
  return nif_ok(c, map);
}
