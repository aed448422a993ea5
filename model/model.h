/* model/model.h: the data every floor above shares, in one include: a snapshot
 * (model/snapshot.h), a suite's results (model/tests.h), findings (model/finding.h), the
 * verdict (model/verdict.h) and figures for people (model/figures.h). */
#ifndef GATE_MODEL_MODEL_H
#define GATE_MODEL_MODEL_H

#include "model/figures.h"
#include "model/finding.h"
#include "model/snapshot.h"
#include "model/tests.h"
#include "model/verdict.h"

#endif
