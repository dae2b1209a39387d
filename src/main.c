/* attnviz: options, then either the headless path (--print, --export) or
 * the window. The only place that prints errors and picks exit codes. */
#include "attnviz/app.h"
#include "attnviz/source.h"
#include "attnviz/attnio.h"
#include "attnviz/import.h"
#include "attnviz/embed.h"
#include "attnviz/io.h"
#include "attnviz/model.h"
#include "attnviz/options.h"
#include "attnviz/paths.h"
#include "attnviz/session.h"
#include "attnviz/teach_app.h"
#include "attnviz/teach_io.h"

#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ATTNVIZ_VERSION "0.1.0"

static int fail(const AttnErr *err)
{
    char buf[1200];
    attn_err_format(err, buf, sizeof buf);
    fprintf(stderr, "attnviz: error: %s\n", buf);
    return 1;
}

/* Numbered name for --all-lines: out.png, sentence 3 → out-03.png. */
static void numbered(char *buf, size_t n, const char *path, int k, int total)
{
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash))
        dot = path + strlen(path);
    int digits = total >= 100 ? 3 : 2;
    snprintf(buf, n, "%.*s-%0*d%s", (int)(dot - path), path, digits, k, dot);
}

/* Set m's sentence, refusing what the command line cannot show. */
static int set_sentence(Model *m, const char *text, const char *where, AttnErr *err)
{
    int rc = model_set_text(m, text, strlen(text));
    if (rc < 0)
        return attn_err_set(err, -rc, NULL, 0, "cannot tokenize the sentence");
    if (m->toks.n_total > ATTN_MAX_TOKENS)
        return attn_err_set(err, ATTN_E_TOO_MANY_TOKENS, where, 0,
                            "the sentence has %d tokens; at most %d are allowed",
                            m->toks.n_total, ATTN_MAX_TOKENS);
    if (m->T == 0)
        return attn_err_set(err, ATTN_E_EMPTY, where, 0,
                            "the sentence is empty (no tokens)");
    int words = 0;
    for (int i = 0; i < m->T; i++)
        words += !tok_is_punct(&m->toks, i);
    if (!words)
        return attn_err_set(err, ATTN_E_EMPTY, where, 0,
                            "the sentence has only punctuation, no words");
    if (m->toks.n_replaced)
        fprintf(stderr, "attnviz: warning: %s%sinvalid UTF-8: %d byte(s) shown as U+FFFD\n",
                where ? where : "", where ? ": " : "", m->toks.n_replaced);
    if (model_count_oov(m)) {
        fprintf(stderr, "attnviz: note: not in the embedding table (hashed vectors):");
        for (int i = 0; i < m->T; i++)
            if (m->oov[i])
                fprintf(stderr, " %s", tok_text(&m->toks, i));
        fputc('\n', stderr);
    }
    return 0;
}

/* The second sentence (keys and values): text "" is self-attention. Over
 * ATTN_MAX_TOKENS tokens it is kept, cut, with a note (the first sentence
 * is refused instead: its rows are what the printout is about). */
static int set_keys(Model *m, const char *text, const char *where, AttnErr *err)
{
    int rc = model_set_keys(m, text, strlen(text));
    if (rc < 0)
        return attn_err_set(err, -rc, where, 0, "cannot tokenize the second sentence");
    if (*text && !m->cross)
        return attn_err_set(err, ATTN_E_EMPTY, where, 0,
                            "the second sentence (keys) is empty (no tokens): '%s'", text);
    if (m->ktoks.n_total > ATTN_MAX_TOKENS)
        fprintf(stderr, "attnviz: note: %s: %d tokens, the first %d are used\n",
                where, m->ktoks.n_total, ATTN_MAX_TOKENS);
    if (m->ktoks.n_replaced)
        fprintf(stderr, "attnviz: warning: %s: invalid UTF-8: %d byte(s) shown as U+FFFD\n",
                where, m->ktoks.n_replaced);
    int n_oov = 0;
    for (int j = 0; m->cross && j < m->Tk; j++)
        n_oov += m->koov[j] != 0;
    if (n_oov) {
        fprintf(stderr, "attnviz: note: %s: not in the embedding table (hashed vectors):", where);
        for (int j = 0; j < m->Tk; j++)
            if (m->koov[j])
                fprintf(stderr, " %s", m->klabels[j]);
        fputc('\n', stderr);
    }
    return 0;
}

static int check_selection(const Model *m, const Options *o, AttnErr *err)
{
    if (o->query >= m->T)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "--query %d is out of range: the sentence has %d tokens",
                            o->query + 1, m->T);
    if (o->head >= m->res.h)
        return attn_err_set(err, ATTN_E_RANGE, NULL, 0,
                            "--head %d is out of range: there %s %d head%s", o->head + 1,
                            m->res.h == 1 ? "is" : "are", m->res.h, m->res.h == 1 ? "" : "s");
    return 0;
}

/* --print json's "teach" object as text (the caller frees it), or NULL. */
static char *teach_json(const Teacher *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = t->target ? open_memstream(&buf, &len) : NULL;
    if (!f)
        return NULL;
    int rc = teach_print_json(f, t);
    if (fclose(f) != 0 || rc < 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static int headless(Model *m, const Options *o, const Teacher *t, AttnErr *err)
{
    m->keep_window_matrices = o->matrix != MODEL_WEIGHTS; /* logits, heads' mean */
    int rc = model_compute(m);
    if (rc < 0)
        return attn_err_set(err, -rc, NULL, 0, "attention failed");
    if ((rc = check_selection(m, o, err)) < 0)
        return rc;
    model_prepare(m, MODEL_WEIGHTS, o->head); /* the heads' mean, printed as NULL without memory */
    if (o->print == PRINT_TEXT)
        rc = print_text(stdout, m, o->head);
    else if (o->print == PRINT_CSV)
        rc = print_csv(stdout, m, o->head);
    else if (o->print == PRINT_JSON) {
        char *teach = teach_json(t);
        if (t->target && !teach)
            return attn_err_set(err, ATTN_E_NOMEM, NULL, 0, "out of memory");
        rc = print_json_member(stdout, m, "teach", teach);
        free(teach);
    }
    if (rc < 0 || fflush(stdout) != 0)
        return attn_err_set(err, ATTN_E_IO, "stdout", 0, "write failed");
    for (int k = 0; k < o->n_exports; k++)
        if ((rc = export_file(m, o, o->exports[k], err)) < 0)
            return rc;
    return 0;
}

/* The exit status of a command line that ends before any work: 2 for a
 * usage error, 1 for a bad value, 0 for --help and --version; else -1. */
static int options_done(int rc, const Options *o, const AttnErr *err)
{
    if (rc == -ATTN_E_PARSE) {
        fprintf(stderr, "attnviz: %s\nTry 'attnviz --help' for the options.\n", err->msg);
        return 2;
    }
    if (rc < 0)
        return fail(err);
    if (o->help || o->version) {
        fputs(o->help ? options_usage : "attnviz " ATTNVIZ_VERSION "\n", stdout);
        return 0;
    }
    return -1;
}

/* The embedding table of -e, or the built-in one; warns of duplicates. */
static int load_table(EmbedTable **table, const Options *o, AttnErr *err)
{
    char path[4096];
    AttnErr warn = {0};
    const char *emb = o->embeddings;
    if (!emb) {
        if (paths_find_data("embeddings.txt", path, sizeof path) < 0)
            return attn_err_set(err, ATTN_E_IO, "embeddings.txt", 0,
                                "built-in embedding table not found (set ATTNVIZ_DATADIR or use -e FILE)");
        emb = path;
    }
    int rc = embed_load(table, emb, err, &warn);
    if (rc < 0)
        return rc;
    if ((*table)->n_duplicates) {
        char buf[1200];
        attn_err_format(&warn, buf, sizeof buf);
        fprintf(stderr, "attnviz: warning: %s (%d duplicate%s, the first wins)\n", buf,
                (*table)->n_duplicates, (*table)->n_duplicates == 1 ? "" : "s");
    }
    return 0;
}

/* --session FILE for a lesson not written yet (like an editor's new file):
 * FILE is missing but its folder is there. */
static int new_session(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 || errno != ENOENT)
        return 0;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return 1;
    *slash = '\0';
    return stat(dir[0] ? dir : "/", &st) == 0 && S_ISDIR(st.st_mode);
}

/* The model with the command line's settings, then its --seed and
 * --weights; or the session's, with the command line's over them (and its
 * query unless --query). *model_ok: m needs model_destroy. */
static int setup_model(Model *m, int *model_ok, const EmbedTable *table, Options *o,
                       SessionView *sv, AttnErr *err)
{
    if (o->cfg.mode == ATTN_MODE_LEARNED && table->d % o->cfg.heads != 0)
        return attn_err_set(err, ATTN_E_HEADS, NULL, 0,
                            "--heads %d does not divide d = %d (the embedding size)",
                            o->cfg.heads, table->d);
    int rc = model_init(m, table, &o->cfg);
    if (rc < 0)
        return attn_err_set(err, -rc, NULL, 0, "cannot set up the model");
    *model_ok = 1;
    session_view_default(sv);
    int fresh = o->session && new_session(o->session);
    /* with a session they apply after it (app_cli_overrides), read once */
    if ((!o->session || fresh) && o->has_seed)
        model_set_seed(m, o->seed);
    if ((!o->session || fresh) && o->weights && (rc = app_load_weights(m, o->weights, err)) < 0)
        return rc;
    if (fresh) {
        fprintf(stderr, "attnviz: note: %s does not exist yet: a new lesson (Ctrl+S writes it)\n",
                o->session);
    } else if (o->session) {
        if ((rc = app_load_session(m, sv, o->session, err)) < 0 ||
            (rc = app_cli_overrides(m, sv, o, err)) < 0)
            return rc;
        if (o->query < 0 && sv->query >= 0 && sv->query < m->T)
            o->query = sv->query;
    }
    return 0;
}

/* The sentences of -f (checking --line), or sentences/default.txt when
 * there is one. */
static int load_sentences(SentenceList *sl, const Options *o, AttnErr *err)
{
    char path[4096];
    if (o->sentence_file) {
        int rc = sentences_load(sl, o->sentence_file, err);
        if (rc < 0)
            return rc;
        if (o->line > sl->n)
            return attn_err_set(err, ATTN_E_RANGE, o->sentence_file, 0,
                                "--line %ld is out of range: the file has %d sentence%s",
                                o->line, sl->n, sl->n == 1 ? "" : "s");
    } else if (paths_find_data("sentences/default.txt", path, sizeof path) == 0) {
        /* every file of sentences/ (default.txt first): PageUp/PageDown walk them all */
        AttnErr warn = {0};
        *strrchr(path, '/') = '\0';
        if (sentences_load_folder(sl, path, "default.txt", &warn) < 0)
            memset(sl, 0, sizeof *sl);
        else if (warn.code) {
            char buf[1200];
            attn_err_format(&warn, buf, sizeof buf);
            fprintf(stderr, "attnviz: note: left out of the sentences: %s\n", buf);
        }
    }
    return 0;
}

/* The second sentence for sentence k of sl: --keys, else the file's pair
 * (where names its line), else none; the session's stays when neither is
 * given (k < 0: no line of the file). */
static int pick_keys(Model *m, const Options *o, const SentenceList *sl, int k,
                     const char *where, AttnErr *err)
{
    int rc = 0;
    if (o->keys)
        rc = set_keys(m, o->keys, "--keys", err);
    else if (k >= 0 && k < sl->n && sl->keys && sl->keys[k][0])
        rc = set_keys(m, sl->keys[k], where, err);
    else if (k >= 0)
        rc = set_keys(m, "", where, err);
    if (rc == 0 && m->cross && m->cfg.causal)
        fprintf(stderr, "attnviz: note: %s: two sentences: the causal mask applies to "
                        "self-attention only, it is off\n", o->keys ? "--keys" : where);
    return rc;
}

/* --all-lines: every sentence of the file, with numbered exports. */
static int export_all_lines(Model *m, const Options *o, const SentenceList *sl, AttnErr *err)
{
    int rc;
    m->keep_window_matrices = o->matrix != MODEL_WEIGHTS;
    for (int k = 0; k < sl->n; k++) {
        char where[1100];
        snprintf(where, sizeof where, "%s:%ld", o->sentence_file, sl->line[k]);
        if ((rc = set_sentence(m, sl->text[k], where, err)) < 0 ||
            (rc = pick_keys(m, o, sl, k, where, err)) < 0)
            return rc;
        if ((rc = model_compute(m)) < 0 || (rc = check_selection(m, o, err)) < 0)
            return rc;
        for (int e = 0; e < o->n_exports; e++) {
            char name[4200];
            numbered(name, sizeof name, o->exports[e], k + 1, sl->n);
            if ((rc = export_file(m, o, name, err)) < 0)
                return rc;
        }
    }
    return 0;
}

/* The sentence to show: -s or the words, the session's, line N (or the
 * first) of -f, the first default sentence, or a built-in one. *where
 * names the file and line of one from -f (wbuf holds it), else NULL. */
static const char *pick_sentence(const Model *m, const Options *o, const SentenceList *sl,
                                 char *wbuf, size_t n, const char **where)
{
    const char *text = o->sentence;
    *where = NULL;
    if (!text && o->session)
        text = m->text;
    if (!text && o->sentence_file) {
        int k = o->line ? (int)o->line - 1 : 0;
        text = sl->text[k];
        snprintf(wbuf, n, "%s:%ld", o->sentence_file, sl->line[k]);
        *where = wbuf;
    }
    if (!text && sl->n > 0)
        text = sl->text[0];
    if (!text)
        text = "the train left the station on time";
    return text;
}

/* The attention file to open (*path, or NULL): --attention or a lone
 * .npy/.npz/.safetensors, a lone .json whose content is attention rather
 * than a session, or the file a session of an attention file names (its
 * layer, head, rollout and query unless flags say otherwise). */
static int attention_path(Options *o, const char **path, AttnErr *err)
{
    *path = o->attention;
    if (o->attention || !o->session)
        return 0;
    static AttnSession sn;
    AttnPathKind kind = attn_path_kind(o->session);
    if (kind == ATTN_PATH_SESSION) {
        if (attn_session_load(&sn, o->session, err) < 0)
            return -err->code;
        /* flags given now win over the session's */
        o->layer = o->layer_set ? o->layer : sn.layer;
        o->head = o->head_set ? o->head : sn.head;
        o->rollout = o->rollout || sn.rollout;
        o->query = o->query >= 0 ? o->query : sn.query;
        o->attention = sn.file;
    } else if (kind == ATTN_PATH_FILE) {
        o->attention = o->session;
    } else {
        return 0;
    }
    o->session = NULL;
    *path = o->attention;
    return 0;
}

/* A source's path on the command line (an attention file): open it with
 * the flags; then print and export it (0 returned, *opened NULL), or hand
 * it to the window (*opened). */
static int open_source(const Options *o, const SourceKind *k, const char *path, void **opened,
                       AttnErr *err)
{
    void *it;
    *opened = NULL;
    if (k->cli_open(o, path, &it, err) < 0)
        return -err->code;
    if (o->print == PRINT_NONE && o->n_exports == 0 && !o->export_attention) {
        *opened = it;
        return 0;
    }
    int rc = k->cli_write(it, o, err);
    k->cli_free(it);
    return rc;
}

int main(int argc, char **argv)
{
    Options o;
    AttnErr err = {0};
    EmbedTable *table = NULL;
    SentenceList sl = {0};
    Model m;
    SessionView sv = {0};
    Teacher teacher = {0};
    int model_ok = 0, status;

    /* a file size limit (ulimit -f) makes writes fail with EFBIG, which the
     * atomic writers report and clean up, instead of killing the program */
    signal(SIGXFSZ, SIG_IGN);
    int rc = options_parse(&o, argc, argv, &err);
    if ((status = options_done(rc, &o, &err)) >= 0) {
        options_free(&o);
        return status;
    }
    status = 1;
    const char *attn;
    const SourceKind *kind = NULL; /* the source of a path on the command line */
    void *window_src = NULL;       /* what it opened, for the window */
    if (attention_path(&o, &attn, &err) < 0)
        goto done;
    if (attn && (o.keys || o.score_set)) {
        fprintf(stderr, "attnviz: %s is an attention file: its maps are given, --keys and --score "
                        "apply to a sentence\nTry 'attnviz --help' for the options.\n", attn);
        status = 2;
        goto done;
    }
    if (o.model) { /* a language model computed here, on the sentence */
        attn = o.model;
        kind = &source_gpt2;
    }
    if (attn && !kind && !(kind = source_for_path(attn)))
        kind = &source_file; /* --attention names one, whatever its name */
    if (attn) {
        if (open_source(&o, kind, attn, &window_src, &err) < 0)
            goto done;
        if (!window_src) { /* printed and exported */
            status = 0;
            goto done;
        }
    } else if (o.tokens || o.key_tokens || o.layer_set || o.rollout || o.drop || o.view == VIEW_GRID) {
        fprintf(stderr, "attnviz: %s is a session, not an attention file: --tokens, --layer, "
                        "--rollout, --drop and --view grid need one\nTry 'attnviz --help' for the "
                        "options.\n", o.session);
        status = 2;
        goto done;
    }
    if (load_table(&table, &o, &err) < 0 ||
        setup_model(&m, &model_ok, table, &o, &sv, &err) < 0 ||
        load_sentences(&sl, &o, &err) < 0)
        goto done;
    if (window_src) { /* the window owns it from here on */
        void *it = window_src;
        window_src = NULL;
        model_set_text(&m, "", 0);
        status = app_run(&m, &o, &sl, NULL, kind, it, &err) < 0;
        goto done;
    }
    if (o.all_lines) {
        status = export_all_lines(&m, &o, &sl, &err) < 0;
        goto done;
    }
    int headless_mode = o.print != PRINT_NONE || o.n_exports > 0;
    char wbuf[1100];
    const char *where;
    const char *text = pick_sentence(&m, &o, &sl, wbuf, sizeof wbuf, &where);
    if (headless_mode || o.sentence || o.sentence_file) {
        if (set_sentence(&m, text, where, &err) < 0)
            goto done;
    } else {
        model_set_text(&m, text, strlen(text));
    }
    /* a line of -f may be a pair; --keys wins over it and over a session's */
    int line_k = o.sentence_file && !o.sentence ? (o.line ? (int)o.line - 1 : 0) : -1;
    if (pick_keys(&m, &o, &sl, line_k, where, &err) < 0)
        goto done;
    if (o.teach && teach_run(&m, &o, &teacher, &err) < 0)
        goto done;
    if (o.teach && !headless_mode) /* the window opens on what was learned */
        fprintf(stderr, "attnviz: taught %s: loss %.4g -> %.4g in %ld steps\n", o.teach,
                teacher.loss[0], teacher.loss[teacher.n_loss - 1], teacher.steps);
    if (headless_mode)
        rc = headless(&m, &o, &teacher, &err);
    else
        rc = app_run(&m, &o, &sl, o.session ? &sv : NULL, NULL, NULL, &err);
    status = rc < 0;
done:
    teacher_free(&teacher);
    session_view_free(&sv);
    if (window_src)
        kind->cli_free(window_src);
    if (status != 0 && (err.code || err.msg[0]))
        fail(&err);
    if (model_ok)
        model_destroy(&m);
    sentences_free(&sl);
    embed_destroy(table);
    options_free(&o);
    return status;
}
