/* Background work: one worker thread and one request slot, for a source
 * whose computation takes longer than a frame. Not the forward pass's
 * helper thread (workers.h). No SDL here: the UI says how it wants to be
 * woken (the window's notify pushes an SDL user event: app_wake).
 *
 *   bg_create(run, notify)  start the thread
 *   bg_submit(b, request)   the newest request wins: it replaces the one
 *                           still waiting and bumps the generation, so the
 *                           one running becomes stale
 *   run(ctx, request, job)  on the worker: between steps (layers) it asks
 *                           bg_stale(job) and returns early when stale;
 *                           bg_post(job, result) hands over a result (one
 *                           at the end, or one per step), then notify runs
 *   bg_take(b, &res)        on the UI thread, when notified: the newest
 *                           result of the newest request, if any
 *   bg_destroy(b)           stops the run at its next bg_stale and waits
 *                           for it; an idle worker is not waited for
 *   bg_breathe()            on the UI thread, between steps of long work
 *                           done there (a model's open): the one-thread
 *                           page draws meanwhile; elsewhere nothing
 *   bg_watch_breathe(fn)    for tests: fn runs at each bg_breathe
 *   bg_threaded()           1 when run has a thread of its own (work the
 *                           UI cannot break into slices may go there)
 *   bg_may_wait()           1 when this thread may hand half of some work
 *                           to a thread of its own and wait for it
 *                           (bg_set_may_wait(0): the browser's main thread)
 *
 * Only the newest result waits to be taken: a result posted before the last
 * one was taken replaces it. So a request's partial results should each be
 * whole so far (layers 1 … k, not layer k alone) when none may be missed;
 * BgResult.step tells them apart and BgResult.last marks the final one.
 *
 * Threads: bg_submit, bg_cancel, bg_take and bg_destroy from one thread
 * (the UI's); run and notify run on the worker; bg_stale and bg_post only
 * inside run, with its job.
 *
 * Ownership: bg_submit takes the request. It is freed with free_request
 * (NULL: not freed) once run returns, or when a newer request replaces it
 * before it started, or by bg_cancel or bg_destroy; run only borrows it.
 * bg_post takes the result: the Background frees it with free_result when
 * it is stale (then bg_post says so) or replaced before it was taken, and
 * bg_take gives it to the caller, who frees it with BgResult.free_data.
 * The free functions may run on either thread. */
#ifndef ATTNVIZ_BACKGROUND_H
#define ATTNVIZ_BACKGROUND_H

typedef struct Background Background;
/* The request a run function is given: for bg_stale and bg_post. */
typedef struct BgJob BgJob;

typedef void (*BgFree)(void *p);
/* Compute request (borrowed) on the worker thread; ctx as given to
 * bg_create. */
typedef void (*BgRun)(void *ctx, void *request, BgJob *job);
/* After a result is posted, on the worker thread: wake the UI thread. It
 * must not call the Background's functions. */
typedef void (*BgNotify)(void *ctx);

typedef struct BgResult {
    void *data;         /* the taker's: free it with free_data */
    BgFree free_data;   /* NULL: nothing to free */
    unsigned long gen;  /* its request's generation (bg_submit's number) */
    int step;           /* 0, 1, … in the order its request posted them */
    int last;           /* its request's final result */
} BgResult;

/* Start the worker. notify may be NULL (the UI polls bg_take). NULL when
 * memory or a thread cannot be had. */
Background *bg_create(BgRun run, void *run_ctx, BgNotify notify, void *notify_ctx);
/* Stop the run in progress at its next bg_stale and join the thread (run
 * borrows run_ctx: the caller may free it once this returns), then free
 * the waiting request and the untaken result. A worker not inside run is
 * not waited for (a join blocks the threaded page's main thread): it is
 * detached, and frees those and the Background itself as it ends, without
 * calling run or notify again. NULL: nothing. */
void bg_destroy(Background *b);

/* Queue request, replacing (and freeing) the waiting one and the untaken
 * result; the run in progress becomes stale. Returns the request's
 * generation (1, 2, …; increasing). */
unsigned long bg_submit(Background *b, void *request, BgFree free_request);
/* No request any more: the waiting one and the untaken result freed, the
 * run in progress stale. */
void bg_cancel(Background *b);
/* The newest result of the newest request not yet taken: 1 and *out, else
 * 0 (a stale result is freed, never handed over). */
int bg_take(Background *b, BgResult *out);

/* In run, between steps: 1 when a newer request came (or bg_cancel,
 * bg_destroy), and the run should return; else 0. Lock-free. */
int bg_stale(const BgJob *job);
/* In run: hand result over (last: the request's final one) and call
 * notify. 0, or -1 when the job is stale (result freed, nothing
 * notified). */
int bg_post(BgJob *job, void *result, BgFree free_result, int last);

/* On the UI thread, between two steps of long work done there rather than
 * on the worker (a model opened: its first forward, a layer a step). With
 * a worker thread (the desktop, the threaded page) it does nothing. On the
 * browser's one-thread page (background_single.c) it gives the browser
 * its thread back once the work has had it for a slice, so the page keeps
 * painting, and resumes the work at the next animation frame; it does so
 * only where the page can suspend the work (a file dropped or picked:
 * tools/web/web.mk's ASYNCIFY list), else it returns at once. */
void bg_breathe(void);
/* For tests: fn(ctx) runs at every bg_breathe of the calling thread from
 * now on (NULL: none), so that a test sees where long work breaks up. */
typedef void (*BgBreatheWatch)(void *ctx);
void bg_watch_breathe(BgBreatheWatch fn, void *ctx);

/* 1 where run runs on a thread of its own (background.c: the desktop, the
 * threaded page), so that work which cannot give the thread back between
 * its steps (a model's open: the read, the tokenizer, the first forward)
 * keeps the UI responsive there; 0 on the one-thread page
 * (background_single.c), where such work stays on the UI thread with
 * bg_breathe between its steps. The one place the choice is made. */
int bg_threaded(void);

/* may 0: the calling thread must never wait for another: the threaded
 * page's main thread, the browser's, which a join blocks (emscripten warns
 * "Blocking on the main thread"; platform_web.c says so at the start).
 * bg_may_wait answers 0 on it from then on; may 1 (a test) undoes it. */
void bg_set_may_wait(int may);
/* 1 when the calling thread may start a thread for half of some work and
 * wait for it (png.c's two halves of a PNG, attnfile.c's rollout
 * products); 0 on a thread bg_set_may_wait(0) named and on the one-thread
 * page (no threads), where the work is done whole on this thread: there
 * the wait would take as long as the half it saves. */
int bg_may_wait(void);

#endif
