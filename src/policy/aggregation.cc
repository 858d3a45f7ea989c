#include "policy/policy.h"
