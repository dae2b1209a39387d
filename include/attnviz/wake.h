/* Waking the window's event loop from another thread: background work
 * (background.h) passes app_wake as its notify; it pushes one SDL user
 * event, which the loop takes as "tick now" (app_tick takes the results,
 * then a redraw). While one is waiting in the queue no other is pushed. */
#ifndef ATTNVIZ_WAKE_H
#define ATTNVIZ_WAKE_H

#include <stdint.h>

union SDL_Event;

/* The wake event's type, registered with SDL once (SDL_RegisterEvents);
 * 0 when SDL has no user event left. Any thread. */
uint32_t app_wake_event(void);
/* A BgNotify: push the wake event unless one is waiting (ctx unused). Any
 * thread, after SDL_Init. */
void app_wake(void *ctx);
/* On the UI thread, for each event: 1 when e is the wake event (the next
 * app_wake pushes another; take the results after this), else 0. */
int app_wake_is(const union SDL_Event *e);

#endif
