/* knobs.c - the table of environment knobs (knobs.h) as data, for
 * `tileconv info --knobs`. */
#include "knobs.h"

const tc__knob tc__knob_table[TC__NKNOBS] = {
#define TC__KNOB_ROW(id, name, old, def, reader, meaning) {name, old, def, reader, meaning},
    TC__KNOBS(TC__KNOB_ROW)
#undef TC__KNOB_ROW
};
