SELECT CASE WHEN `_dlt_load_id` >= %s THEN 1 ELSE 0 END AS `_co_recent`, COUNT(*), COUNT(`actor_login`) FROM `acme-analytics-42`.`raw_events`.`events` WHERE `_dlt_load_id` >= %s GROUP BY 1
