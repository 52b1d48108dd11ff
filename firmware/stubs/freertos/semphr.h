// Stand-in for ESP-IDF's freertos/semphr.h (the real ones are macros over the queue API).
#pragma once
#include "freertos/FreeRTOS.h"

typedef struct QueueDefinition* QueueHandle_t;
typedef QueueHandle_t SemaphoreHandle_t;

#ifdef __cplusplus
extern "C" {
#endif
SemaphoreHandle_t xSemaphoreCreateBinary(void);
BaseType_t xSemaphoreTake(SemaphoreHandle_t xSemaphore, TickType_t xBlockTime);
BaseType_t xSemaphoreGive(SemaphoreHandle_t xSemaphore);
#ifdef __cplusplus
}
#endif
