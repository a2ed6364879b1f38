/* Placeholder until the portable kernels land. */
#include "shuffle/shuffle.h"
