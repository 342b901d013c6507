// SVG chart primitives: nice ticks, labels and escaping worked by hand, and the pixel coordinates of small charts
// computed by hand from the default frame (720 x 300; plot from x 64 to 704 and y 52 (top) to 260 (bottom), so
// 640 x 208 pixels).
#include "results/svg_chart.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace gputwin::svg {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(NiceTicks, RoundsTheStepUpToOneTwoOrFive) {
  // (97 - 0) / 5 = 19.4 -> 2 x 10^1; the axis runs from 0 to ceil(97 / 20) x 20 = 100.
  const Ticks t = nice_ticks(0, 97, 5);
  EXPECT_EQ(t.step, 20);
  EXPECT_EQ(t.lo, 0);
  EXPECT_EQ(t.hi, 100);
  EXPECT_EQ(t.decimals, 0);
  EXPECT_THAT(t.values, ElementsAre(0, 20, 40, 60, 80, 100));
}

TEST(NiceTicks, FractionalStepsAreExactMultiples) {
  // (0.87 - 0.013) / 5 = 0.1714 -> 2 x 10^-1; floor(0.013 / 0.2) = 0, ceil(0.87 / 0.2) = 5. Summing 0.2 three
  // times gives 0.6000000000000001; the ticks are k x 2 / 10, so the fourth is the double nearest 0.6.
  const Ticks t = nice_ticks(0.013, 0.87, 5);
  EXPECT_EQ(t.step, 0.2);
  EXPECT_EQ(t.decimals, 1);
  ASSERT_EQ(t.values.size(), 6u);
  EXPECT_EQ(t.values[3], 0.6);
  EXPECT_EQ(t.values[5], 1.0);
}

TEST(NiceTicks, NegativeAndEmptyRanges) {
  // (7 - -3) / 5 = 2 -> step 2; floor(-1.5) = -2 -> -4, ceil(3.5) = 4 -> 8.
  EXPECT_THAT(nice_ticks(-3, 7, 5).values, ElementsAre(-4, -2, 0, 2, 4, 6, 8));
  // [0, 0] becomes [0, 1]: step 1 / 5 = 0.2.
  EXPECT_THAT(nice_ticks(0, 0, 5).values, ElementsAre(0, 0.2, 0.4, 0.6, 0.8, 1.0));
  // [3600, 3600] is widened by half to [1800, 5400]: 3600 / 5 = 720 -> 10^3.
  EXPECT_THAT(nice_ticks(3600, 3600, 5).values, ElementsAre(1000, 2000, 3000, 4000, 5000, 6000));
}

TEST(TickLabel, DecimalsAndThousands) {
  const Ticks small = nice_ticks(0.013, 0.87, 5);
  EXPECT_EQ(tick_label(0.6, small), "0.6");
  EXPECT_EQ(tick_label(0, small), "0");
  // 23456 / 5 = 4691 -> step 5000: labels in thousands.
  const Ticks big = nice_ticks(0, 23456, 5);
  EXPECT_EQ(big.hi, 25000);
  EXPECT_EQ(tick_label(25000, big), "25k");
  // 2.3e6 / 5 = 460000 -> step 500000 = 5 x 10^5: one decimal in millions.
  const Ticks millions = nice_ticks(0, 2.3e6, 5);
  EXPECT_EQ(tick_label(2.5e6, millions), "2.5M");
  EXPECT_EQ(tick_label(-2, nice_ticks(-3, 7, 5)), "-2");
  EXPECT_EQ(tick_label(1000, nice_ticks(0, 1000, 5)), "1000");  // below 10^4: no suffix
}

TEST(XmlEscape, EntitiesAndControlCharacters) {
  EXPECT_EQ(xml_escape(R"(a<b & "c" 'd' >)"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos; &gt;");
  EXPECT_EQ(xml_escape("tab\tok\x01no"), "tab\tok?no");
  EXPECT_EQ(xml_escape("gpu\xc3\xa9"), "gpu\xc3\xa9");  // UTF-8 passes through
}

TEST(SvgNumber, TwoDecimalsAtMostAndNoNegativeZero) {
  EXPECT_EQ(svg_number(64), "64");
  EXPECT_EQ(svg_number(352.5), "352.5");
  EXPECT_EQ(svg_number(1.0 / 3), "0.33");
  EXPECT_EQ(svg_number(-0.001), "0");
}

TEST(LineChart, PolylineCoordinatesByHand) {
  // x ticks 0..10 (step 2), y ticks 0..100 (step 20). px(x) = 64 + x / 10 x 640, py(y) = 260 - y / 100 x 208:
  // (0, 0) -> (64, 260), (5, 50) -> (384, 156), (10, 100) -> (704, 52).
  XyChart c{
      .title = "t", .x_label = "x", .y_label = "y", .x = {0, 5, 10}, .series = {{.name = "s", .values = {0, 50, 100}}}};
  const std::string svg = line_chart(c);
  EXPECT_THAT(svg, HasSubstr(R"(<polyline points="64,260 384,156 704,52" fill="none" stroke="#0072B2")"));
  EXPECT_THAT(svg, HasSubstr(R"(<svg xmlns="http://www.w3.org/2000/svg" width="720" height="300")"));
  // The y tick 60 at 260 - 0.6 x 208 = 135.2, its label right-aligned 6 px left of the plot.
  EXPECT_THAT(svg, HasSubstr(R"(<text x="58" y="139.2" text-anchor="end">60</text>)"));
  EXPECT_EQ(svg, line_chart(c));  // same data, same bytes
}

TEST(LineChart, BreaksAtMissingValuesAndDrawsLonePointsAsDots) {
  XyChart c{
      .title = "t", .x_label = "", .y_label = "", .x = {0, 5, 10}, .series = {{.name = "s", .values = {0, NAN, 100}}}};
  const std::string svg = line_chart(c);
  EXPECT_THAT(svg, Not(HasSubstr("<polyline")));
  EXPECT_THAT(svg, HasSubstr(R"(<circle cx="64" cy="260" r="2")"));
  EXPECT_THAT(svg, HasSubstr(R"(<circle cx="704" cy="52" r="2")"));
  // A series can mark its points larger.
  c.series[0].dot_radius = 4.5;
  EXPECT_THAT(line_chart(c), HasSubstr(R"(<circle cx="704" cy="52" r="4.5")"));
}

TEST(LineChart, EscapesTitleLabelsAndSeriesNames) {
  XyChart c{.title = "CPU <&> GPU",
            .x_label = "a\"b",
            .y_label = "",
            .x = {0, 1},
            .series = {{.name = "x<y", .values = {1, 2}}}};
  const std::string svg = line_chart(c);
  EXPECT_THAT(svg, HasSubstr(">CPU &lt;&amp;&gt; GPU</text>"));
  EXPECT_THAT(svg, HasSubstr(">a&quot;b</text>"));
  EXPECT_THAT(svg, HasSubstr(">x&lt;y</text>"));
  EXPECT_THAT(svg, Not(HasSubstr("<&>")));
}

TEST(LineChart, SeriesOfTheWrongLengthIsRefused) {
  XyChart c{.title = "t", .x_label = "", .y_label = "", .x = {0, 1}, .series = {{.name = "s", .values = {1}}}};
  EXPECT_THROW(line_chart(c), std::invalid_argument);
}

TEST(StackedArea, PolygonsByHand) {
  // Totals 2 and 4 -> y ticks 0..4 (4 / 5 = 0.8 -> step 1), py(v) = 260 - 52 v; x 0..10 -> 64..704.
  // a: top (64, 208) (704, 208), back along 0. b: top at 1 + 1 = 2 -> 156 and 1 + 3 = 4 -> 52, back along a's top.
  XyChart c{.title = "t",
            .x_label = "",
            .y_label = "",
            .x = {0, 10},
            .series = {{.name = "a", .values = {1, 1}}, {.name = "b", .values = {1, 3}, .colour = "#123456"}}};
  const std::string svg = stacked_area_chart(c);
  EXPECT_THAT(svg, HasSubstr(R"(<polygon points="64,208 704,208 704,260 64,260" fill="#0072B2")"));
  EXPECT_THAT(svg, HasSubstr(R"(<polygon points="64,156 704,52 704,208 64,208" fill="#123456")"));
}

TEST(BarChart, VerticalBarsByHand) {
  // Two categories in 640 px: bands of 320, bars 0.75 x 320 = 240 wide from 40 px into the band. Ticks 0..4 (step
  // 1), so 1 = 52 px: a (2) is 104 high from y 156, b (4) 208 high from y 52.
  BarChart c{.title = "t", .categories = {"a", "b"}, .series = {{.name = "n", .values = {2, 4}}}};
  const std::string svg = bar_chart(c);
  EXPECT_THAT(svg, HasSubstr(R"(<rect x="104" y="156" width="240" height="104" fill="#0072B2"><title>a: 2</title>)"));
  EXPECT_THAT(svg, HasSubstr(R"(<rect x="424" y="52" width="240" height="208" fill="#0072B2"><title>b: 4</title>)"));
}

TEST(BarChart, StackedSegmentsAndHorizontalLayout) {
  // Stacked: b = 1 + 3 = 4 is the top of the axis; its second segment runs from 1 (y 208) to 4 (y 52).
  BarChart c{.title = "t",
             .categories = {"a", "b"},
             .series = {{.name = "x", .values = {1, 1}}, {.name = "y", .values = {1, 3}}}};
  EXPECT_THAT(bar_chart(c),
              HasSubstr(R"(<rect x="424" y="52" width="240" height="156" fill="#E69F00"><title>b, y: 3)"));
  // Horizontal: 52 + 2 x 22 + 40 = 136 high; bars 0.75 x 22 = 16.5 thick. Value ticks 0..4 over 64..704 (160 px
  // each): b's second segment starts at 64 + 160 and is 3 x 160 = 480 long, 2.75 px into the second band (74).
  c.horizontal = true;
  const std::string svg = bar_chart(c);
  EXPECT_THAT(svg, HasSubstr(R"(height="136" viewBox="0 0 720 136")"));
  EXPECT_THAT(svg, HasSubstr(R"(<rect x="224" y="76.75" width="480" height="16.5" fill="#E69F00")"));
}

}  // namespace
}  // namespace gputwin::svg
