// scaling_controller alone, driven by a scripted world (tests/support/fake_world.hpp).
#include "control/scaling_controller.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/fake_world.hpp"
