/* Tests for background work (src/core/background.c) on a real thread, and
 * its wake-up through an SDL user event (src/app/wake.c): the newest
 * request wins, a stale run stops between steps, partial results come in
 * order and only through bg_take, destroy stops a busy worker and leaves
 * an idle one to end by itself, every
 * request and result is freed once. No test sleeps for a fixed time: each
 * waits for a condition, with a generous limit. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <SDL.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnviz/background.h"
#include "attnviz/wake.h"

enum { LIMIT_MS = 20000 }; /* a wait that fails the test, not a pause */

/* What the tests' run function does with a request. */
typedef struct Req {
    int value;
    int steps;      /* steps to run, checking bg_stale before each */
    int post_each;  /* post a result after every step, else after the last */
    int gate_at;    /* before this step, wait for the test to open the gate (-1: never) */
    int post_after_gate; /* right after the gate, post once without checking */
} Req;

/* A result: the request's value and the steps it ran. */
typedef struct Res {
    int value;
    int steps;
} Res;

/* Shared by the test and the worker, under mu. */
typedef struct Ctx {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int runs;          /* run calls begun */
    int last_value;    /* the request of the latest run */
    int steps_done;    /* of the latest run */
    int at_gate;       /* the run waits at the gate */
    int gate_open;
    int stale_post;    /* bg_post's answer after the gate */
    int posts;         /* bg_post calls returned */
    int notified;
    atomic_int reqs_freed, results_freed;
} Ctx;

static Ctx *ctx_new(void)
{
    Ctx *c = calloc(1, sizeof *c);
    assert_non_null(c);
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    c->stale_post = 1;
    return c;
}

static void ctx_free(Ctx *c)
{
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static Ctx *the_ctx; /* for the free functions: one test at a time */
static pthread_t test_thread; /* main's: the thread that calls bg_* */
static atomic_int freed_elsewhere; /* free functions run on another thread */

static void note_thread(void)
{
    if (!pthread_equal(pthread_self(), test_thread))
        atomic_fetch_add(&freed_elsewhere, 1);
}

static void free_req(void *p)
{
    note_thread();
    atomic_fetch_add(&the_ctx->reqs_freed, 1);
    free(p);
}

static void free_res(void *p)
{
    note_thread();
    atomic_fetch_add(&the_ctx->results_freed, 1);
    free(p);
}

/* Wait until *count >= at_least, at most LIMIT_MS (the free functions
 * cannot signal c->cv: they may run under a test's c->mu); 1 if it did. */
static int wait_atomic(atomic_int *count, int at_least)
{
    struct timespec t0, now, ms = {0, 1000000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (atomic_load(count) >= at_least)
            return 1;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 > LIMIT_MS)
            return 0;
        nanosleep(&ms, NULL);
    }
}

static Req *req_new(int value, int steps, int post_each, int gate_at)
{
    Req *r = calloc(1, sizeof *r);
    assert_non_null(r);
    *r = (Req){value, steps, post_each, gate_at, 0};
    return r;
}

static Res *res_new(int value, int steps)
{
    Res *r = malloc(sizeof *r);
    if (r)
        *r = (Res){value, steps};
    return r;
}

/* Wait (c->mu held) until *flag != 0, at most LIMIT_MS; 1 if it did. */
static int wait_flag(Ctx *c, const int *flag)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += LIMIT_MS / 1000;
    while (!*flag)
        if (pthread_cond_timedwait(&c->cv, &c->mu, &until) != 0)
            return *flag != 0;
    return 1;
}

static int wait_count(Ctx *c, const int *count, int at_least)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += LIMIT_MS / 1000;
    while (*count < at_least)
        if (pthread_cond_timedwait(&c->cv, &c->mu, &until) != 0)
            return *count >= at_least;
    return 1;
}

static void run(void *vc, void *vr, BgJob *job)
{
    Ctx *c = vc;
    const Req *r = vr;
    pthread_mutex_lock(&c->mu);
    c->runs++;
    c->last_value = r->value;
    c->steps_done = 0;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    for (int s = 0; s < r->steps; s++) {
        if (s == r->gate_at) {
            pthread_mutex_lock(&c->mu);
            c->at_gate = 1;
            pthread_cond_broadcast(&c->cv);
            wait_flag(c, &c->gate_open);
            pthread_mutex_unlock(&c->mu);
            if (r->post_after_gate) {
                int rc = bg_post(job, res_new(r->value, s), free_res, 0);
                pthread_mutex_lock(&c->mu);
                c->stale_post = rc;
                pthread_mutex_unlock(&c->mu);
            }
        }
        if (bg_stale(job))
            return;
        pthread_mutex_lock(&c->mu);
        c->steps_done = s + 1;
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
        if (r->post_each || s == r->steps - 1) {
            bg_post(job, res_new(r->value, s + 1), free_res, s == r->steps - 1);
            pthread_mutex_lock(&c->mu);
            c->posts++;
            pthread_cond_broadcast(&c->cv);
            pthread_mutex_unlock(&c->mu);
        }
    }
}

static void notify(void *vc)
{
    Ctx *c = vc;
    pthread_mutex_lock(&c->mu);
    c->notified++;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

static void open_gate(Ctx *c)
{
    pthread_mutex_lock(&c->mu);
    assert_true(wait_flag(c, &c->at_gate));
    c->gate_open = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

/* Take results until one with last set comes (each notify, then bg_take);
 * returns it, the others freed. */
static BgResult take_last(Background *b, Ctx *c)
{
    BgResult r = {0};
    int seen = 0;
    for (;;) {
        pthread_mutex_lock(&c->mu);
        int ok = wait_count(c, &c->notified, seen + 1);
        seen = c->notified;
        pthread_mutex_unlock(&c->mu);
        assert_true(ok);
        while (bg_take(b, &r)) {
            if (r.last)
                return r;
            r.free_data(r.data);
        }
    }
}

/* Many requests while the first runs: only the first and the last run, the
 * ones between are freed unrun, and only the last's result is taken. */
static void test_newest_wins(void **state)
{
    (void)state;
    Ctx *c = the_ctx = ctx_new();
    Background *b = bg_create(run, c, notify, c);
    assert_non_null(b);
    unsigned long g1 = bg_submit(b, req_new(1, 3, 0, 0), free_req);
    pthread_mutex_lock(&c->mu);
    assert_true(wait_flag(c, &c->at_gate)); /* the first runs, held at the gate */
    pthread_mutex_unlock(&c->mu);
    unsigned long g = g1;
    for (int v = 2; v <= 100; v++) {
        unsigned long n = bg_submit(b, req_new(v, 3, 0, -1), free_req);
        assert_true(n > g);
        g = n;
    }
    assert_int_equal(atomic_load(&c->reqs_freed), 98); /* 2 … 99, replaced */
    assert_int_equal(bg_take(b, &(BgResult){0}), 0);
    open_gate(c);
    BgResult r = take_last(b, c);
    Res *res = r.data;
    assert_int_equal(res->value, 100);
    assert_int_equal(res->steps, 3);
    assert_int_equal(r.gen, g);
    assert_int_equal(r.step, 0);
    r.free_data(r.data);
    pthread_mutex_lock(&c->mu);
    assert_int_equal(c->runs, 2);
    pthread_mutex_unlock(&c->mu);
    assert_int_equal(bg_take(b, &r), 0); /* nothing new */
    bg_destroy(b);
    assert_int_equal(atomic_load(&c->reqs_freed), 100);
    assert_int_equal(atomic_load(&c->results_freed), 1); /* the one taken, freed here */
    ctx_free(c);
}

/* A long run is abandoned at the first step after a newer request came:
 * it stops at step 5 of 1000, its late result is refused and freed. */
static void test_cancelled_between_steps(void **state)
{
    (void)state;
    Ctx *c = the_ctx = ctx_new();
    Background *b = bg_create(run, c, notify, c);
    assert_non_null(b);
    Req *long_one = req_new(1, 1000, 1, 5);
    long_one->post_after_gate = 1;
    bg_submit(b, long_one, free_req);
    pthread_mutex_lock(&c->mu);
    assert_true(wait_flag(c, &c->at_gate));
    assert_int_equal(c->steps_done, 5);
    pthread_mutex_unlock(&c->mu);
    unsigned long g2 = bg_submit(b, req_new(2, 2, 0, -1), free_req);
    open_gate(c);
    BgResult r = take_last(b, c);
    assert_int_equal(((Res *)r.data)->value, 2);
    assert_int_equal(r.gen, g2);
    r.free_data(r.data);
    pthread_mutex_lock(&c->mu);
    assert_int_equal(c->stale_post, -1);
    assert_int_equal(c->runs, 2);
    pthread_mutex_unlock(&c->mu);
    bg_destroy(b);
    /* the long run's 5 partial results (4 replaced, 1 dropped by the new
     * request) and its refused one by the Background, the taken one here */
    assert_int_equal(atomic_load(&c->results_freed), 7);
    assert_int_equal(atomic_load(&c->reqs_freed), 2);
    ctx_free(c);
}

/* A run posts 50 partial results: taken as they come, their steps only
 * increase, and the last says so; those replaced before a take are freed
 * by the Background, and the rest were the taker's. */
static void test_partial_results_in_order(void **state)
{
    (void)state;
    Ctx *c = the_ctx = ctx_new();
    Background *b = bg_create(run, c, notify, c);
    assert_non_null(b);
    unsigned long g = bg_submit(b, req_new(7, 50, 1, -1), free_req);
    int taken = 0, prev = -1, seen = 0, last = 0;
    while (!last) {
        pthread_mutex_lock(&c->mu);
        int ok = wait_count(c, &c->notified, seen + 1);
        seen = c->notified;
        pthread_mutex_unlock(&c->mu);
        assert_true(ok);
        BgResult r;
        while (bg_take(b, &r)) {
            Res *res = r.data;
            assert_int_equal(r.gen, g);
            assert_true(r.step > prev);
            assert_int_equal(res->steps, r.step + 1); /* step k posted after k + 1 steps */
            prev = r.step;
            last = r.last;
            taken++;
            r.free_data(r.data);
        }
    }
    assert_int_equal(prev, 49);
    bg_destroy(b);
    assert_int_equal(atomic_load(&c->results_freed), 50); /* taken ones freed here too */
    assert_true(taken >= 1 && taken <= 50);
    ctx_free(c);
}

/* Posted results wait in the Background until taken (polled here, no
 * notify); one left untaken is freed when a newer request comes, and a
 * cancelled run posts nothing. */
static void test_results_only_through_take(void **state)
{
    (void)state;
    Ctx *c = the_ctx = ctx_new();
    Background *b = bg_create(run, c, NULL, NULL);
    assert_non_null(b);
    unsigned long g = bg_submit(b, req_new(3, 1, 0, -1), free_req);
    pthread_mutex_lock(&c->mu);
    assert_true(wait_count(c, &c->posts, 1));
    pthread_mutex_unlock(&c->mu);
    BgResult r;
    assert_int_equal(bg_take(b, &r), 1);
    assert_int_equal(r.gen, g);
    assert_int_equal(r.step, 0);
    assert_true(r.last);
    assert_int_equal(((Res *)r.data)->value, 3);
    r.free_data(r.data);
    assert_int_equal(atomic_load(&c->results_freed), 1);
    assert_int_equal(bg_take(b, &r), 0); /* taken once */
    bg_submit(b, req_new(5, 1, 0, -1), free_req);
    pthread_mutex_lock(&c->mu);
    assert_true(wait_count(c, &c->posts, 2));
    pthread_mutex_unlock(&c->mu);
    assert_int_equal(atomic_load(&c->results_freed), 1); /* it waits, not taken */
    bg_submit(b, req_new(4, 1, 0, 0), free_req); /* held at its gate */
    assert_int_equal(atomic_load(&c->results_freed), 2); /* 5's: stale, dropped */
    pthread_mutex_lock(&c->mu);
    assert_true(wait_flag(c, &c->at_gate));
    pthread_mutex_unlock(&c->mu);
    assert_int_equal(bg_take(b, &r), 0);
    bg_cancel(b);
    open_gate(c);
    bg_destroy(b); /* joins: the cancelled run returned */
    assert_int_equal(atomic_load(&c->results_freed), 2); /* it posted nothing */
    assert_int_equal(atomic_load(&c->reqs_freed), 3);
    pthread_mutex_lock(&c->mu);
    assert_int_equal(c->posts, 2);
    assert_int_equal(c->runs, 3);
    assert_int_equal(c->steps_done, 0);
    pthread_mutex_unlock(&c->mu);
    ctx_free(c);
}

/* Destroy while a run is busy (it would run 10^9 steps): it returns, the
 * run stopped; again with a second request submitted just before (waiting,
 * or begun): every request freed once. */
static void test_destroy_while_busy(void **state)
{
    (void)state;
    Ctx *c = the_ctx = ctx_new();
    Background *b = bg_create(run, c, notify, c);
    assert_non_null(b);
    bg_submit(b, req_new(1, 1000000000, 0, -1), free_req);
    pthread_mutex_lock(&c->mu);
    assert_true(wait_count(c, &c->steps_done, 100));
    pthread_mutex_unlock(&c->mu);
    bg_destroy(b);
    pthread_mutex_lock(&c->mu);
    assert_true(c->steps_done < 1000000000);
    assert_int_equal(c->notified, 0);
    assert_int_equal(c->runs, 1);
    pthread_mutex_unlock(&c->mu);
    assert_int_equal(atomic_load(&c->reqs_freed), 1);

    c->runs = c->steps_done = 0; /* no thread runs now */
    b = bg_create(run, c, notify, c);
    assert_non_null(b);
    bg_submit(b, req_new(1, 1000000000, 0, -1), free_req);
    pthread_mutex_lock(&c->mu);
    assert_true(wait_count(c, &c->steps_done, 100));
    pthread_mutex_unlock(&c->mu);
    bg_submit(b, req_new(2, 1000000000, 0, -1), free_req);
    bg_destroy(b);
    assert_int_equal(atomic_load(&c->reqs_freed), 3);
    assert_true(c->runs >= 1 && c->runs <= 2);
    assert_int_equal(c->notified, 0);
    bg_destroy(bg_create(run, c, notify, c)); /* nothing submitted */
    bg_destroy(NULL);
    ctx_free(c);
}

/* An idle worker (its run returned, its result not taken) is not waited
 * for: bg_destroy returns at once, and the worker frees the untaken result
 * (and the Background) itself as it ends, on its own thread, calling
 * neither run nor notify again; the closing thread is never blocked, which
 * on the threaded page is the browser's main thread. */
static void test_destroy_idle_not_waited(void **state)
{
    (void)state;
    Ctx *c = the_ctx = ctx_new();
    for (int round = 0; round < 20; round++) {
        atomic_store(&freed_elsewhere, 0);
        atomic_store(&c->results_freed, 0);
        atomic_store(&c->reqs_freed, 0);
        c->notified = c->runs = 0;
        Background *b = bg_create(run, c, notify, c);
        assert_non_null(b);
        bg_submit(b, req_new(7, 3, 0, -1), free_req);
        pthread_mutex_lock(&c->mu);
        assert_true(wait_flag(c, &c->notified));
        pthread_mutex_unlock(&c->mu);
        assert_true(wait_atomic(&c->reqs_freed, 1)); /* run has returned: the worker is idle */
        bg_destroy(b);
        assert_true(wait_atomic(&c->results_freed, 1));
        assert_int_equal(atomic_load(&freed_elsewhere), 2); /* the request after its run, the result now */
        pthread_mutex_lock(&c->mu);
        assert_int_equal(c->runs, 1);
        assert_int_equal(c->notified, 1);
        pthread_mutex_unlock(&c->mu);
    }
    ctx_free(c);
}

/* A thread that says it must not wait (bg_set_may_wait(0)): what
 * bg_may_wait answers there, before, after, and once undone. */
static void *no_wait_thread(void *out)
{
    int *said = out;
    said[0] = bg_may_wait();
    bg_set_may_wait(0);
    said[1] = bg_may_wait();
    bg_set_may_wait(1);
    said[2] = bg_may_wait();
    return NULL;
}

/* bg_may_wait: 1 on any thread until one calls bg_set_may_wait(0), then 0 on
 * that thread alone (the browser's main thread does a PNG's two halves
 * itself; the others go on splitting). */
static void test_may_wait_but_there(void **state)
{
    (void)state;
    assert_int_equal(bg_may_wait(), 1);
    int said[3] = {-1, -1, -1};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, no_wait_thread, said), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(said[0], 1);
    assert_int_equal(said[1], 0);
    assert_int_equal(said[2], 1);
    assert_int_equal(bg_may_wait(), 1); /* this thread was not named */
}

/* The window's notify: one SDL user event wakes SDL_WaitEventTimeout, and
 * bg_take then gives the result; while one waits in the queue no second is
 * pushed, and after app_wake_is the next result pushes again. */
static void test_sdl_wake_event(void **state)
{
    (void)state;
    Ctx *c = the_ctx = ctx_new();
    assert_int_equal(SDL_Init(SDL_INIT_EVENTS), 0);
    Uint32 type = app_wake_event();
    assert_true(type >= SDL_USEREVENT);
    assert_int_equal(app_wake_event(), type);
    Background *b = bg_create(run, c, app_wake, NULL);
    assert_non_null(b);
    for (int round = 0; round < 2; round++) {
        /* 20 partial results: one event (or a few, taken between them) */
        unsigned long g = bg_submit(b, req_new(10 + round, 20, 1, -1), free_req);
        int last = 0, events = 0;
        Uint32 t0 = SDL_GetTicks();
        while (!last && SDL_GetTicks() - t0 < LIMIT_MS) {
            SDL_Event e;
            if (!SDL_WaitEventTimeout(&e, 1000) || !app_wake_is(&e))
                continue;
            events++;
            assert_true(SDL_PeepEvents(NULL, 0, SDL_PEEKEVENT, type, type) <= 1);
            BgResult r;
            while (bg_take(b, &r)) {
                assert_int_equal(r.gen, g);
                assert_int_equal(((Res *)r.data)->value, 10 + round);
                last = r.last;
                r.free_data(r.data);
            }
        }
        assert_true(last);
        assert_true(events >= 1 && events <= 20);
    }
    SDL_Event other = {.type = SDL_USEREVENT == type ? type + 1 : SDL_USEREVENT};
    assert_int_equal(app_wake_is(&other), 0);
    bg_destroy(b);
    SDL_FlushEvent(type);
    SDL_Quit();
    ctx_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_newest_wins),
        cmocka_unit_test(test_cancelled_between_steps),
        cmocka_unit_test(test_partial_results_in_order),
        cmocka_unit_test(test_results_only_through_take),
        cmocka_unit_test(test_destroy_while_busy),
        cmocka_unit_test(test_destroy_idle_not_waited),
        cmocka_unit_test(test_may_wait_but_there),
        cmocka_unit_test(test_sdl_wake_event),
    };
    test_thread = pthread_self();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
