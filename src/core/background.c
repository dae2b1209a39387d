/* Background work (background.h): one worker thread, one request slot and
 * one result slot under a mutex, and the newest request's generation in an
 * atomic that the run function reads between steps without the lock.
 *
 * bg_destroy waits for the worker only while it is inside run (which
 * borrows the caller's run_ctx, freed after bg_destroy returns). An idle
 * worker is detached instead and frees the Background itself on its way
 * out: on the threaded page a join on the browser's main thread blocks it
 * ("Blocking on the main thread"), and closing a model source or a page's
 * opener finds its worker idle nearly always. */
#include "attnviz/background.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct BgJob {
    Background *b;
    unsigned long gen; /* the request's */
    int step;          /* results posted so far */
};

struct Background {
    BgRun run;
    void *run_ctx;
    BgNotify notify;
    void *notify_ctx;
    pthread_t thread;
    atomic_ulong gen;  /* the newest request's; written under mu */
    atomic_int quit;   /* bg_destroy; written under mu */
    int running;       /* under mu: the worker is inside run */
    int orphan;        /* under mu: bg_destroy detached the worker, which frees b */
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a request or quit for the worker */
    /* under mu */
    void *req;         /* the waiting request */
    BgFree free_req;
    int has_req;
    BgResult out;      /* the untaken result */
    int has_out;
};

static void free_result(BgResult *r)
{
    if (r->free_data && r->data)
        r->free_data(r->data);
}

static void free_result(BgResult *r);

/* b's slots, its lock and itself, once no thread uses it any more. */
static void bg_free(Background *b)
{
    if (b->has_req && b->free_req && b->req)
        b->free_req(b->req);
    if (b->has_out)
        free_result(&b->out);
    pthread_cond_destroy(&b->cv);
    pthread_mutex_destroy(&b->mu);
    free(b);
}

static void *worker(void *arg)
{
    Background *b = arg;
    pthread_mutex_lock(&b->mu);
    for (;;) {
        while (!b->has_req && !atomic_load(&b->quit))
            pthread_cond_wait(&b->cv, &b->mu);
        if (atomic_load(&b->quit))
            break;
        void *req = b->req;
        BgFree free_req = b->free_req;
        BgJob job = {b, atomic_load(&b->gen), 0};
        b->has_req = 0;
        b->req = NULL;
        b->running = 1;
        pthread_mutex_unlock(&b->mu);
        b->run(b->run_ctx, req, &job);
        if (free_req)
            free_req(req);
        pthread_mutex_lock(&b->mu);
        b->running = 0;
    }
    int orphan = b->orphan;
    pthread_mutex_unlock(&b->mu);
    if (orphan)
        bg_free(b);
    return NULL;
}

Background *bg_create(BgRun run, void *run_ctx, BgNotify notify, void *notify_ctx)
{
    Background *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->run = run;
    b->run_ctx = run_ctx;
    b->notify = notify;
    b->notify_ctx = notify_ctx;
    atomic_init(&b->gen, 0);
    atomic_init(&b->quit, 0);
    if (pthread_mutex_init(&b->mu, NULL) != 0)
        goto no_mutex;
    if (pthread_cond_init(&b->cv, NULL) != 0)
        goto no_cond;
    if (pthread_create(&b->thread, NULL, worker, b) != 0)
        goto no_thread;
    return b;
no_thread:
    pthread_cond_destroy(&b->cv);
no_cond:
    pthread_mutex_destroy(&b->mu);
no_mutex:
    free(b);
    return NULL;
}

/* Under mu: a new generation; the waiting request (*req, *free_req: the
 * caller frees it after unlocking) and the untaken result (*out) leave
 * their slots. */
static unsigned long next_gen(Background *b, void **req, BgFree *free_req, BgResult *out)
{
    *req = b->has_req ? b->req : NULL;
    *free_req = b->has_req ? b->free_req : NULL;
    *out = b->has_out ? b->out : (BgResult){0};
    b->has_req = b->has_out = 0;
    b->req = NULL;
    unsigned long gen = atomic_load(&b->gen) + 1;
    atomic_store(&b->gen, gen);
    return gen;
}

static void free_dropped(void *req, BgFree free_req, BgResult *out)
{
    if (free_req && req)
        free_req(req);
    free_result(out);
}

unsigned long bg_submit(Background *b, void *request, BgFree free_request)
{
    void *old;
    BgFree free_old;
    BgResult out;
    pthread_mutex_lock(&b->mu);
    unsigned long gen = next_gen(b, &old, &free_old, &out);
    b->req = request;
    b->free_req = free_request;
    b->has_req = 1;
    pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->mu);
    free_dropped(old, free_old, &out);
    return gen;
}

void bg_cancel(Background *b)
{
    void *old;
    BgFree free_old;
    BgResult out;
    pthread_mutex_lock(&b->mu);
    next_gen(b, &old, &free_old, &out);
    pthread_mutex_unlock(&b->mu);
    free_dropped(old, free_old, &out);
}

int bg_take(Background *b, BgResult *out)
{
    BgResult stale = {0};
    pthread_mutex_lock(&b->mu);
    int got = b->has_out && b->out.gen == atomic_load(&b->gen);
    if (got)
        *out = b->out;
    else if (b->has_out)
        stale = b->out;
    b->has_out = 0;
    pthread_mutex_unlock(&b->mu);
    free_result(&stale);
    return got;
}

static _Thread_local int no_wait; /* bg_set_may_wait(0) was called on this thread */

void bg_set_may_wait(int may)
{
    no_wait = !may;
}

int bg_may_wait(void)
{
    return !no_wait;
}

void bg_destroy(Background *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&b->mu);
    atomic_store(&b->quit, 1);
    pthread_cond_signal(&b->cv);
    /* idle: run will not be entered again, so nothing of the caller's is
     * touched after this; the worker frees b (b is not read here after the
     * unlock: the worker may have freed it by then) */
    int orphan = !b->running && pthread_detach(b->thread) == 0;
    b->orphan = orphan;
    pthread_mutex_unlock(&b->mu);
    if (orphan)
        return;
    pthread_join(b->thread, NULL);
    bg_free(b);
}

int bg_stale(const BgJob *job)
{
    const Background *b = job->b;
    return atomic_load(&b->quit) || atomic_load(&b->gen) != job->gen;
}

int bg_post(BgJob *job, void *result, BgFree free_data, int last)
{
    Background *b = job->b;
    BgResult r = {result, free_data, job->gen, job->step++, last}, replaced = {0};
    pthread_mutex_lock(&b->mu);
    int fresh = !bg_stale(job);
    if (fresh) {
        if (b->has_out)
            replaced = b->out;
        b->out = r;
        b->has_out = 1;
    }
    pthread_mutex_unlock(&b->mu);
    free_result(fresh ? &replaced : &r);
    if (!fresh)
        return -1;
    if (b->notify)
        b->notify(b->notify_ctx);
    return 0;
}

static _Thread_local BgBreatheWatch watch; /* bg_watch_breathe's, on this thread */
static _Thread_local void *watch_ctx;

/* Nothing here but a test's watch: with threads a model's open runs on a
 * worker of its own (model_opening.c), and the UI thread never waits for
 * it; only the one-thread page, which has nowhere else to compute, breaks
 * it up (background_single.c). */
void bg_breathe(void)
{
    if (watch)
        watch(watch_ctx);
}

void bg_watch_breathe(BgBreatheWatch fn, void *ctx)
{
    watch = fn;
    watch_ctx = ctx;
}

int bg_threaded(void)
{
    return 1;
}
