// operations_controller alone, driven by a scripted world (tests/support/fake_world.hpp).
#include "control/operations_controller.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/fake_world.hpp"
