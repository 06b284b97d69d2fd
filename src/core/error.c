/* error.c — the thread-local error message behind emlx_last_error().
 *
 * Every public function that fails sets it and returns NULL or non-zero; it
 * is never cleared by success, so a caller reads it right after a failure. */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

static _Thread_local char tls_error[512];

void emlx__set_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(tls_error, sizeof tls_error, fmt, ap);
  va_end(ap);
}

const char *emlx_last_error(void) { return tls_error; }

void emlx_clear_error(void) { tls_error[0] = '\0'; }
