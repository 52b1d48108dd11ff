// Stand-in for ESP-IDF's freertos/task.h.
#pragma once
#include "freertos/FreeRTOS.h"

typedef struct tskTaskControlBlock* TaskHandle_t;
typedef void (*TaskFunction_t)(void*);

#ifdef __cplusplus
extern "C" {
#endif
BaseType_t xTaskCreatePinnedToCore(TaskFunction_t pxTaskCode, const char* const pcName, const uint32_t usStackDepth,
                                   void* const pvParameters, UBaseType_t uxPriority, TaskHandle_t* const pxCreatedTask,
                                   const BaseType_t xCoreID);
void vTaskDelay(const TickType_t xTicksToDelay);
void vTaskDelete(TaskHandle_t xTaskToDelete);
#ifdef __cplusplus
}
#endif
