// control_plane alone, driven by a scripted world (tests/support/fake_world.hpp).
#include "control/control_plane.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/fake_world.hpp"
