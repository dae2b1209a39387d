/* The wake event (wake.h): one SDL user event type, registered once, pushed
 * by background threads when a result is ready and at most one in the
 * queue at a time. */
#include "attnviz/wake.h"

#include <SDL.h>
#include <pthread.h>
#include <stdatomic.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static Uint32 wake_type;   /* set once under once */
static atomic_int waiting; /* a wake event is in the queue */

static void register_type(void)
{
    Uint32 t = SDL_RegisterEvents(1);
    wake_type = t == (Uint32)-1 ? 0 : t;
}

uint32_t app_wake_event(void)
{
    pthread_once(&once, register_type);
    return wake_type;
}

void app_wake(void *ctx)
{
    (void)ctx;
    Uint32 type = app_wake_event();
    if (!type || atomic_exchange(&waiting, 1))
        return;
    SDL_Event e;
    SDL_zero(e);
    e.type = type;
    if (SDL_PushEvent(&e) != 1) /* a full queue or no SDL: the next may push */
        atomic_store(&waiting, 0);
}

int app_wake_is(const SDL_Event *e)
{
    Uint32 type = app_wake_event();
    if (!type || e->type != type)
        return 0;
    atomic_store(&waiting, 0);
    return 1;
}
