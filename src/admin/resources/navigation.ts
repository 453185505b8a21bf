/** The admin sidebar's sections. */
export const ACCESS_CONTROL = { name: 'Access control', icon: 'Users' };
export const TASK_QUEUE = { name: 'Task queue', icon: 'Activity' };
