// Stand-in for ESP-IDF driver/ledc.h (the two enums camera_config_t uses).
#pragma once
typedef enum { LEDC_TIMER_0 = 0, LEDC_TIMER_1, LEDC_TIMER_2, LEDC_TIMER_3, LEDC_TIMER_MAX } ledc_timer_t;
typedef enum {
  LEDC_CHANNEL_0 = 0,
  LEDC_CHANNEL_1,
  LEDC_CHANNEL_2,
  LEDC_CHANNEL_3,
  LEDC_CHANNEL_4,
  LEDC_CHANNEL_5,
  LEDC_CHANNEL_6,
  LEDC_CHANNEL_7,
  LEDC_CHANNEL_MAX
} ledc_channel_t;
