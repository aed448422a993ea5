/* ci/report/chart.h: the HTML report's sections for --repeat and --sample: --repeat's runs (a table
 * of the figures after every run and their growth) and --sample's series (one inline SVG
 * time series per category, no scripts). A function of the model and a stream only, like the
 * other writers. */
#ifndef GATE_CI_REPORT_CHART_H
#define GATE_CI_REPORT_CHART_H

#include <stdio.h>

#include "ci/report/report.h"

/* Writes <section id="runs"> when d->repeat, <section id="samples"> when d->samples; nothing
 * otherwise. Only figures are written (no text from the suite). */
void chart_html_write(FILE *out, const struct report_data *d);

#endif
