/*
 * report.c - `tileconv bench --json FILE` and `--plot FILE.svg`.
 *
 * The JSON holds everything the table shows plus every sample. The SVG is a
 * roofline written by hand: log-log axes, arithmetic intensity (FLOP per
 * byte of input read + output written) against GFLOP/s, the measured FMA
 * peak and copy bandwidth as lines, one labelled point per case for our
 * best runner and for each peer timed in this process. Both files are
 * written to FILE.tmp and renamed into place.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "bench.h"

static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, "%.6g", v);
    else fputs("null", f);
}

static const char *kind_name(int k) {
    switch (k) {
    case BK_AUTO: return "auto";
    case BK_FORCED: return "forced";
    case BK_MODE: return "mode";
    case BK_PEER: return "peer";
    default: return "external";
    }
}

static FILE *open_tmp(const char *path, char *tmp, size_t n) {
    snprintf(tmp, n, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) tool_error("bench: cannot write '%s'", tmp);
    return f;
}

static int close_rename(FILE *f, const char *tmp, const char *path) {
    int bad = ferror(f);
    if (fclose(f) || bad || rename(tmp, path)) {
        remove(tmp);
        return tool_error("bench: cannot write '%s'", path);
    }
    return 0;
}

int bench_write_json(const char *path, const bench_report *rep) {
    char tmp[4096];
    FILE *f = open_tmp(path, tmp, sizeof tmp);
    if (!f) return 1;
    const bench_ceilings *ce = rep->ceil;
    fprintf(f, "{\n  \"command\": ");
    json_str(f, rep->command);
    fprintf(f, ",\n  \"tileconv\": ");
    json_str(f, tc_version());
    fprintf(f, ",\n  \"cpu\": ");
    json_str(f, rep->cpu_model);
    fprintf(f, ",\n  \"cpus\": %d,\n  \"threads\": %d,\n  \"backend\": ", rep->ncpu, rep->threads);
    json_str(f, rep->backend);
    fprintf(f, ",\n  \"algorithms\": ");
    json_str(f, rep->algorithms);
    fprintf(f, ",\n  \"peers\": ");
    json_str(f, rep->peers);
    fprintf(f, ",\n  \"load_average\": [");
    json_num(f, rep->load_start);
    fputs(", ", f);
    json_num(f, rep->load_end);
    fprintf(f, "],\n  \"ceilings\": {\"fma_gflops\": ");
    json_num(f, ce->flops / 1e9);
    fprintf(f, ", \"copy_gbs\": ");
    json_num(f, ce->bytes_per_s / 1e9);
    fprintf(f, ", \"isa\": ");
    json_str(f, ce->isa);
    fprintf(f, ", \"copy_method\": ");
    json_str(f, ce->copy_method);
    fprintf(f, ", \"threads\": %d, \"pinned\": %s},\n", ce->threads, ce->pinned ? "true" : "false");
    fprintf(f, "  \"planner\": {\"within_1_2x\": %d, \"cases\": %d},\n", rep->planner_ok,
            rep->planner_n);
    fprintf(f, "  \"targets\": {\"met\": %d, \"total\": %d},\n", rep->targets_met,
            rep->targets_n);
    fprintf(f, "  \"cases\": [");
    for (int i = 0; i < rep->ncases; i++) {
        const bench_case *c = rep->cases[i];
        fprintf(f, "%s\n    {\"id\": ", i ? "," : "");
        json_str(f, c->id);
        fprintf(f, ", \"label\": ");
        json_str(f, c->label);
        fprintf(f, ", \"suite\": ");
        json_str(f, c->suite);
        fprintf(f, ",\n     \"flops\": ");
        json_num(f, c->flops);
        fprintf(f, ", \"bytes\": ");
        json_num(f, c->bytes);
        fprintf(f, ", \"intensity\": ");
        json_num(f, c->flops / c->bytes);
        fprintf(f, ", \"rounds\": %d, \"cold_caches\": %s, \"wall_s\": ", c->rounds, c->cold ? "true" : "false");
        json_num(f, c->wall_s);
        fprintf(f, ",\n     \"estimate\": ");
        json_str(f, c->estimate);
        fprintf(f, ", \"measure\": ");
        json_str(f, c->measure);
        fprintf(f, ", \"measure_plan_ms\": ");
        json_num(f, c->measure_plan_ms);
        fprintf(f, ", \"measure_note\": ");
        json_str(f, c->measure_note);
        fprintf(f, ",\n     \"auto_ms\": ");
        json_num(f, c->auto_ms);
        fprintf(f, ", \"best_ms\": ");
        json_num(f, c->best_ms);
        fprintf(f, ", \"best\": ");
        json_str(f, c->best_name);
        fprintf(f, ", \"best_forced_ms\": ");
        json_num(f, c->best_forced_ms);
        fprintf(f, ", \"best_forced\": ");
        json_str(f, c->best_forced);
        fprintf(f, ", \"choice_ms\": ");
        json_num(f, c->choice_ms);
        fprintf(f, ", \"planner_within_1_2x\": %s,\n     \"runners\": [",
                c->planner_ok < 0 ? "null" : c->planner_ok ? "true" : "false");
        for (int j = 0; j < c->nr; j++) {
            const bench_runner *r = &c->r[j];
            int ok = !r->na[0] && r->n > 0;
            fprintf(f, "%s\n       {\"name\": ", j ? "," : "");
            json_str(f, r->name);
            fprintf(f, ", \"kind\": \"%s\", \"threads\": %d, \"gpu\": %s, \"status\": \"%s\"",
                    kind_name(r->kind), r->threads, r->gpu ? "true" : "false",
                    ok ? "ok" : "n/a");
            fprintf(f, ", \"info\": ");
            json_str(f, r->info);
            if (!ok) {
                fprintf(f, ", \"reason\": ");
                json_str(f, r->na[0] ? r->na : "not run");
                fputc('}', f);
                continue;
            }
            fprintf(f, ", \"median_ms\": ");
            json_num(f, r->median_ms);
            fprintf(f, ", \"min_ms\": ");
            json_num(f, r->min_ms);
            fprintf(f, ", \"gflops\": ");
            json_num(f, bench_gflops(c, r->median_ms));
            fprintf(f, ", \"gbs\": ");
            json_num(f, bench_gbs(c, r->median_ms));
            if (!r->gpu && r->kind != BK_EXTERNAL) {
                fprintf(f, ", \"pct_fma\": ");
                json_num(f, 100 * bench_gflops(c, r->median_ms) * 1e9 / ce->flops);
                fprintf(f, ", \"pct_bw\": ");
                json_num(f, 100 * bench_gbs(c, r->median_ms) * 1e9 / ce->bytes_per_s);
            }
            fprintf(f, ", \"check\": ");
            if (r->check_ref) fputs("\"ref\"", f);
            else json_num(f, r->check >= 0 ? r->check : NAN);
            fprintf(f, ", \"runs_per_sample\": %d", r->inner > 0 ? r->inner : 1);
            fprintf(f, ", \"samples_ms\": [");
            for (int s = 0; s < r->n; s++) {
                if (s) fputs(", ", f);
                json_num(f, r->samples[s]);
            }
            fputs("]}", f);
        }
        fprintf(f, "],\n     \"targets\": [");
        for (int k = 0; k < c->nt; k++) {
            const bench_target *t = &c->t[k];
            fprintf(f, "%s{\"goal\": ", k ? ", " : "");
            json_str(f, t->goal);
            fprintf(f, ", \"text\": ");
            json_str(f, t->text);
            fprintf(f, ", \"evaluated\": %s, \"met\": %s, \"value\": ",
                    t->evaluated ? "true" : "false", t->evaluated && t->met ? "true" : "false");
            json_num(f, t->got);
            fprintf(f, ", \"target\": ");
            json_num(f, t->value);
            fputc('}', f);
        }
        fputs("]}", f);
    }
    fputs("\n  ]\n}\n", f);
    return close_rename(f, tmp, path);
}

/* ---------------------------------------------------------------------- */
/* SVG roofline                                                             */

static void xml_text(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '&') fputs("&amp;", f);
        else if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

typedef struct plot_pt {
    double ai, gf;
    const char *color;
    int ours;
    char label[96];
} plot_pt;

static const char *peer_color(const char *name) {
    if (strncmp(name, "opencv", 6) == 0) return "#ff7f0e";
    if (strncmp(name, "onednn", 6) == 0) return "#2ca02c";
    if (strncmp(name, "openblas", 8) == 0) return "#d62728";
    if (strncmp(name, "fftw", 4) == 0) return "#9467bd";
    if (strncmp(name, "scipy", 5) == 0) return "#8c564b";
    return "#7f7f7f";
}

#define SVG_W 1100.0
#define SVG_H 720.0
#define PL 80.0  /* plot area left */
#define PR 820.0 /* plot area right */
#define PT 50.0
#define PB 650.0

int bench_write_svg(const char *path, const bench_report *rep) {
    const bench_ceilings *ce = rep->ceil;
    int cap = 0;
    for (int i = 0; i < rep->ncases; i++) cap += rep->cases[i]->nr + 1;
    plot_pt *pts = calloc((size_t)cap + 1, sizeof *pts);
    if (!pts) return tool_error("bench: out of memory for the plot");
    int np = 0;
    for (int i = 0; i < rep->ncases; i++) {
        const bench_case *c = rep->cases[i];
        if (c->modes) continue;
        double ai = c->flops / c->bytes;
        if (c->best_ms > 0) {
            plot_pt *p = &pts[np++];
            p->ai = ai;
            p->gf = bench_gflops(c, c->best_ms);
            p->color = "#1f77b4";
            p->ours = 1;
            snprintf(p->label, sizeof p->label, "%s", c->id);
        }
        for (int j = 0; j < c->nr; j++) {
            const bench_runner *r = &c->r[j];
            if (r->na[0] || r->n == 0 || (r->kind != BK_PEER && r->kind != BK_EXTERNAL)) continue;
            if (r->kind == BK_EXTERNAL && strncmp(r->name, "scipy", 5) != 0) continue;
            plot_pt *p = &pts[np++];
            p->ai = ai;
            p->gf = bench_gflops(c, r->median_ms);
            p->color = peer_color(r->name);
            bench_label(p->label, sizeof p->label, "%s %s", c->id, r->name);
        }
    }
    double peak = ce->flops / 1e9, bw = ce->bytes_per_s / 1e9;
    double xmin = peak / bw, xmax = peak / bw, ymin = peak, ymax = peak;
    for (int i = 0; i < np; i++) {
        if (pts[i].ai < xmin) xmin = pts[i].ai;
        if (pts[i].ai > xmax) xmax = pts[i].ai;
        if (pts[i].gf > 0 && pts[i].gf < ymin) ymin = pts[i].gf;
        if (pts[i].gf > ymax) ymax = pts[i].gf;
    }
    /* room on the right for the labels of the rightmost points */
    double lx0 = floor(log10(xmin)), lx1 = ceil(log10(xmax * 3));
    double ly0 = floor(log10(ymin)), ly1 = ceil(log10(ymax * 1.05));
    if (lx1 <= lx0) lx1 = lx0 + 1;
    if (ly1 <= ly0) ly1 = ly0 + 1;
#define XP(v) (PL + (log10(v) - lx0) / (lx1 - lx0) * (PR - PL))
#define YP(v) (PB - (log10(v) - ly0) / (ly1 - ly0) * (PB - PT))

    char tmp[4096];
    FILE *f = open_tmp(path, tmp, sizeof tmp);
    if (!f) {
        free(pts);
        return 1;
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n",
            SVG_W, SVG_H, SVG_W, SVG_H);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"%.0f\" y=\"28\" font-size=\"16\">", PL);
    xml_text(f, "tileconv bench roofline: ");
    xml_text(f, rep->cpu_model);
    fprintf(f, ", %d threads, float32</text>\n", rep->threads);
    /* grid and ticks */
    fprintf(f, "<g stroke=\"#dddddd\" stroke-width=\"1\">\n");
    for (double e = lx0; e <= lx1 + 1e-9; e++) {
        for (int m = 1; m < 10; m++) {
            double v = pow(10, e) * m;
            if (log10(v) > lx1 + 1e-9) break;
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"%s/>\n", XP(v), PT,
                    XP(v), PB, m == 1 ? " stroke=\"#bbbbbb\"" : "");
        }
    }
    for (double e = ly0; e <= ly1 + 1e-9; e++) {
        for (int m = 1; m < 10; m++) {
            double v = pow(10, e) * m;
            if (log10(v) > ly1 + 1e-9) break;
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"%s/>\n", PL, YP(v),
                    PR, YP(v), m == 1 ? " stroke=\"#bbbbbb\"" : "");
        }
    }
    fprintf(f, "</g>\n<g font-size=\"12\" fill=\"black\">\n");
    for (double e = lx0; e <= lx1 + 1e-9; e++)
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", XP(pow(10, e)),
                PB + 18, pow(10, e));
    for (double e = ly0; e <= ly1 + 1e-9; e++)
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", PL - 6,
                YP(pow(10, e)) + 4, pow(10, e));
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">arithmetic intensity "
               "(FLOP per byte: input read + output written once)</text>\n",
            (PL + PR) / 2, PB + 42);
    fprintf(f, "<text transform=\"translate(%.1f,%.1f) rotate(-90)\" text-anchor=\"middle\">"
               "GFLOP/s (2 FLOP per tap per output)</text>\n</g>\n",
            PL - 50, (PT + PB) / 2);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
               "stroke=\"black\"/>\n",
            PL, PT, PR - PL, PB - PT);
    /* ceilings: bandwidth slope up to the ridge, then the flat peak */
    double ridge = peak / bw, xa = pow(10, lx0), xb = pow(10, lx1);
    double ya = bw * xa;
    if (ya < pow(10, ly0)) {
        xa = pow(10, ly0) / bw;
        ya = pow(10, ly0);
    }
    fprintf(f, "<g stroke=\"black\" stroke-width=\"2\" fill=\"none\">\n");
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", XP(xa), YP(ya),
            XP(ridge), YP(peak));
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n</g>\n", XP(ridge),
            YP(peak), XP(xb), YP(peak));
    fprintf(f, "<g font-size=\"12\">\n");
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">FMA peak %.0f GFLOP/s (measured)</text>\n",
            XP(ridge) + 4, YP(peak) - 6, peak);
    double xl = fmax(xa * 1.5, pow(10, lx0 + 0.15)), yl = bw * xl;
    if (yl > pow(10, ly0) && xl < ridge)
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" transform=\"rotate(%.1f %.1f %.1f)\">copy "
                   "bandwidth %.1f GB/s (measured)</text>\n",
                XP(xl), YP(yl) - 6,
                -atan2((PB - PT) / (ly1 - ly0), (PR - PL) / (lx1 - lx0)) * 180 / M_PI, XP(xl),
                YP(yl) - 6, bw);
    fprintf(f, "</g>\n");
    /* points: ours as circles, peers as squares, labels to the right,
     * nudged down until they clear the labels already placed */
    double *lx = calloc((size_t)np + 1, sizeof *lx), *ly = calloc((size_t)np + 1, sizeof *ly);
    int *ord = calloc((size_t)np + 1, sizeof *ord);
    if (!lx || !ly || !ord) {
        free(lx);
        free(ly);
        free(ord);
        fclose(f);
        remove(tmp);
        free(pts);
        return tool_error("bench: out of memory for the plot");
    }
    for (int i = 0; i < np; i++) ord[i] = i;
    for (int i = 1; i < np; i++) /* by screen y, top first */
        for (int j = i; j > 0 && YP(pts[ord[j]].gf) < YP(pts[ord[j - 1]].gf); j--) {
            int t = ord[j];
            ord[j] = ord[j - 1];
            ord[j - 1] = t;
        }
    int placed = 0;
    fprintf(f, "<g font-size=\"9\">\n");
    for (int oi = 0; oi < np; oi++) {
        const plot_pt *p = &pts[ord[oi]];
        if (p->gf <= 0) continue;
        double x = XP(p->ai), y = YP(p->gf), ty = y + 3;
        /* ty only grows; the tolerance keeps ly[k] + 10 - ly[k] (which can
         * round to just under 10) from matching again, and the pass cap
         * bounds the loop whatever the floating point does */
        for (int again = 1, pass = 0; again && pass <= placed; pass++) {
            again = 0;
            for (int k = 0; k < placed; k++)
                if (fabs(lx[k] - (x + 6)) < 140 && fabs(ly[k] - ty) < 10 - 1e-6) {
                    ty = ly[k] + 10;
                    again = 1;
                }
        }
        lx[placed] = x + 6;
        ly[placed++] = ty;
        if (ty - (y + 3) > 4)
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                       "stroke-width=\"0.5\"/>\n",
                    x + 3, y + 1, x + 6, ty - 3, p->color);
        if (p->ours)
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"%s\"/>\n", x, y, p->color);
        else
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\" fill=\"%s\"/>\n",
                    x - 3.5, y - 3.5, p->color);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\">", x + 6, ty, p->color);
        xml_text(f, p->label);
        fprintf(f, "</text>\n");
    }
    fprintf(f, "</g>\n");
    free(lx);
    free(ly);
    free(ord);
    /* legend */
    static const struct {
        const char *name, *color;
    } leg[] = {{"tileconv (best of auto / forced)", "#1f77b4"},
               {"OpenCV", "#ff7f0e"},
               {"oneDNN", "#2ca02c"},
               {"OpenBLAS", "#d62728"},
               {"FFTW (bare)", "#9467bd"},
               {"scipy.ndimage (1 thread)", "#8c564b"}};
    fprintf(f, "<g font-size=\"12\">\n");
    for (int i = 0; i < 6; i++) {
        double y = PT + 10 + 20 * i;
        if (i == 0)
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"%s\"/>\n", PR + 25, y,
                    leg[i].color);
        else
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\" fill=\"%s\"/>\n",
                    PR + 21, y - 4, leg[i].color);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", PR + 35, y + 4, leg[i].name);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">ceilings: %d pinned threads</text>\n", PR + 21,
            PT + 140, ce->threads);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">GFLOP/s counts 2 FLOP per tap per "
               "output:</text>\n", PR + 21, PT + 160);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">FFT and separable points may "
               "exceed the peak</text>\n", PR + 21, PT + 173);
    fprintf(f, "</g>\n</svg>\n");
    free(pts);
    return close_rename(f, tmp, path);
}
